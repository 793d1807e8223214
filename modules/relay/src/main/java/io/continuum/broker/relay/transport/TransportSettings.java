package io.continuum.broker.relay.transport;

import java.time.Duration;

/**
 * Tunables of the HTTP/2 transport. Every deadline is a parameter so tests can shrink it; {@link #defaults()}
 * holds the production values.
 *
 * @param connectionReceiveWindow connection-level receive window advertised to the peer (bytes, 16 to 64 MiB):
 *                                what the peer may send on all streams together before this side releases any.
 *                                The per-stream 64 KiB windows bound each stream; this one bounds the session, so a
 *                                router that opens thousands of streams to publishers that do not read cannot make
 *                                the broker hold streams x 64 KiB. bus-protocol-v1 section 6 asks for at least
 *                                16 MiB; the default is the upstream session cap, 64 MiB.
 * @param streamWindowUpdateThreshold released bytes collected before a stream WINDOW_UPDATE is sent
 * @param connectionWindowUpdateThreshold released bytes collected before a connection WINDOW_UPDATE is sent
 * @param keepaliveInterval       idle time between transport PINGs
 * @param keepaliveTimeout        how long a PING may stay unacknowledged before the connection is declared dead
 * @param localStreamLimit        the most streams this side opens at once, whatever the peer allows
 */
public record TransportSettings(int connectionReceiveWindow,
                                int streamWindowUpdateThreshold,
                                int connectionWindowUpdateThreshold,
                                Duration keepaliveInterval,
                                Duration keepaliveTimeout,
                                long localStreamLimit) {
    /** The HTTP/2 default and this protocol's fixed per-stream receive window (bus-protocol-v1 section 6). */
    public static final int STREAM_RECEIVE_WINDOW = 65_535;
    /** Minimum connection receive window required by bus-protocol-v1 section 6. */
    public static final int MIN_CONNECTION_RECEIVE_WINDOW = 16 * 1024 * 1024;
    /** The default and largest connection receive window: the upstream session cap. */
    public static final int MAX_CONNECTION_RECEIVE_WINDOW = 64 * 1024 * 1024;

    /** Validates. */
    public TransportSettings {
        if (connectionReceiveWindow < MIN_CONNECTION_RECEIVE_WINDOW
                || connectionReceiveWindow > MAX_CONNECTION_RECEIVE_WINDOW) {
            throw new IllegalArgumentException("connection receive window outside 16 to 64 MiB");
        }
        if (streamWindowUpdateThreshold < 1 || streamWindowUpdateThreshold > STREAM_RECEIVE_WINDOW) {
            throw new IllegalArgumentException("stream window update threshold out of range");
        }
        if (connectionWindowUpdateThreshold < 1 || connectionWindowUpdateThreshold > connectionReceiveWindow / 2) {
            throw new IllegalArgumentException("connection window update threshold out of range");
        }
        requirePositive(keepaliveInterval, "keepaliveInterval");
        requirePositive(keepaliveTimeout, "keepaliveTimeout");
        if (localStreamLimit < 1) {
            throw new IllegalArgumentException("localStreamLimit must be at least 1");
        }
    }

    /**
     * Production values: connection window 64 MiB, WINDOW_UPDATE after 16 KiB (stream) / 1 MiB (connection),
     * PING every 5 s, dead after 10 s without the acknowledgement, so a silent peer is noticed within 15 s.
     *
     * @return defaults
     */
    public static TransportSettings defaults() {
        return new TransportSettings(MAX_CONNECTION_RECEIVE_WINDOW, 16 * 1024, 1024 * 1024,
                Duration.ofSeconds(5), Duration.ofSeconds(10), Long.MAX_VALUE);
    }

    /**
     * @param interval PING interval
     * @param timeout  PING acknowledgement timeout
     * @return a copy with other keepalive deadlines
     */
    public TransportSettings withKeepalive(Duration interval, Duration timeout) {
        return new TransportSettings(connectionReceiveWindow, streamWindowUpdateThreshold,
                connectionWindowUpdateThreshold, interval, timeout, localStreamLimit);
    }

    /**
     * A copy that never opens more than {@code limit} streams at once, whatever the peer allows: headroom
     * for a peer that counts a finished stream a little longer than RFC 9113 says (Helidon's server does,
     * and answers the overshoot with a connection-level GOAWAY).
     *
     * @param limit local cap on concurrent streams
     * @return a copy with the cap
     */
    public TransportSettings withLocalStreamLimit(long limit) {
        return new TransportSettings(connectionReceiveWindow, streamWindowUpdateThreshold,
                connectionWindowUpdateThreshold, keepaliveInterval, keepaliveTimeout, limit);
    }

    /** @return the longest time a silent dead peer can go unnoticed */
    public Duration deathDetectionBound() {
        return keepaliveInterval.plus(keepaliveTimeout);
    }

    private static void requirePositive(Duration d, String name) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive");
        }
    }
}
