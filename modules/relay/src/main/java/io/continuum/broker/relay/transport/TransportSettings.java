package io.continuum.broker.relay.transport;

import java.time.Duration;

/**
 * Tunables of the HTTP/2 transport. Every deadline is a parameter so tests can shrink it; {@link #defaults()}
 * holds the production values.
 *
 * @param connectionReceiveWindow connection-level receive window advertised to the peer (bytes, at least 16 MiB).
 *                                The per-stream 64 KiB windows bound memory; this one only has to be large enough
 *                                that stalled streams never block the others (2^30-1 holds 16,384 stalled streams).
 *                                Not 2^31-1: a peer that decrements its send window only after writing DATA (Helidon
 *                                4.5.0's server does) can see a replenishing WINDOW_UPDATE first, and at the maximum
 *                                that takes its window past 2^31-1, which RFC 9113 section 6.9.1 makes it answer with
 *                                GOAWAY FLOW_CONTROL_ERROR. At 2^30-1 even a whole window in flight cannot.
 * @param streamWindowUpdateThreshold released bytes collected before a stream WINDOW_UPDATE is sent
 * @param connectionWindowUpdateThreshold released bytes collected before a connection WINDOW_UPDATE is sent
 * @param keepaliveInterval       idle time between transport PINGs
 * @param keepaliveTimeout        how long a PING may stay unacknowledged before the connection is declared dead
 * @param readPollSlice           longest single wait inside the HTTP/2 stack's stream buffer (a safety net only:
 *                                readers are woken explicitly on reset, cancel and connection loss)
 * @param localStreamLimit        the most streams this side opens at once, whatever the peer allows
 * @param oneOwnerConnection      the internal switch between the two connections under the seam: false (the
 *                                default) for the Helidon-client connection, true for the one the transport owns
 *                                outright ({@link Http2BusConnection}). Not a configuration field: step 3 of the bus
 *                                connection work removes the switch with the Helidon one. {@link #defaults()} reads
 *                                it from the system property {@value #ONE_OWNER_PROPERTY}, so a whole test run or a
 *                                launcher can be switched.
 */
public record TransportSettings(int connectionReceiveWindow,
                                int streamWindowUpdateThreshold,
                                int connectionWindowUpdateThreshold,
                                Duration keepaliveInterval,
                                Duration keepaliveTimeout,
                                Duration readPollSlice,
                                long localStreamLimit,
                                boolean oneOwnerConnection) {
    /** The system property that turns {@link #oneOwnerConnection} on in {@link #defaults()}. */
    public static final String ONE_OWNER_PROPERTY = "continuum.transport.oneOwnerConnection";
    /** The HTTP/2 default and this protocol's fixed per-stream receive window (bus-protocol-v1 section 6). */
    public static final int STREAM_RECEIVE_WINDOW = 65_535;
    /** Minimum connection receive window required by bus-protocol-v1 section 6. */
    public static final int MIN_CONNECTION_RECEIVE_WINDOW = 16 * 1024 * 1024;
    /** The default connection receive window, 2^30-1: headroom for peers whose send-window accounting lags. */
    public static final int DEFAULT_CONNECTION_RECEIVE_WINDOW = (1 << 30) - 1;

    /** Validates. */
    public TransportSettings {
        if (connectionReceiveWindow < MIN_CONNECTION_RECEIVE_WINDOW) {
            throw new IllegalArgumentException("connection receive window below 16 MiB");
        }
        if (streamWindowUpdateThreshold < 1 || streamWindowUpdateThreshold > STREAM_RECEIVE_WINDOW) {
            throw new IllegalArgumentException("stream window update threshold out of range");
        }
        if (connectionWindowUpdateThreshold < 1 || connectionWindowUpdateThreshold > connectionReceiveWindow / 2) {
            throw new IllegalArgumentException("connection window update threshold out of range");
        }
        requirePositive(keepaliveInterval, "keepaliveInterval");
        requirePositive(keepaliveTimeout, "keepaliveTimeout");
        requirePositive(readPollSlice, "readPollSlice");
        if (localStreamLimit < 1) {
            throw new IllegalArgumentException("localStreamLimit must be at least 1");
        }
    }

    /**
     * Production values: connection window 2^30-1, WINDOW_UPDATE after 16 KiB (stream) / 1 MiB (connection),
     * PING every 5 s, dead after 10 s without the acknowledgement, so a silent peer is noticed within 15 s.
     *
     * @return defaults
     */
    public static TransportSettings defaults() {
        return new TransportSettings(DEFAULT_CONNECTION_RECEIVE_WINDOW, 16 * 1024, 1024 * 1024,
                Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(5), Long.MAX_VALUE,
                Boolean.getBoolean(ONE_OWNER_PROPERTY));
    }

    /**
     * @param interval PING interval
     * @param timeout  PING acknowledgement timeout
     * @return a copy with other keepalive deadlines
     */
    public TransportSettings withKeepalive(Duration interval, Duration timeout) {
        return new TransportSettings(connectionReceiveWindow, streamWindowUpdateThreshold,
                connectionWindowUpdateThreshold, interval, timeout, readPollSlice, localStreamLimit,
                oneOwnerConnection);
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
                connectionWindowUpdateThreshold, keepaliveInterval, keepaliveTimeout, readPollSlice, limit,
                oneOwnerConnection);
    }

    /**
     * @param on whether the transport uses the connection it owns outright
     * @return a copy with the switch set
     */
    public TransportSettings withOneOwnerConnection(boolean on) {
        return new TransportSettings(connectionReceiveWindow, streamWindowUpdateThreshold,
                connectionWindowUpdateThreshold, keepaliveInterval, keepaliveTimeout, readPollSlice, localStreamLimit,
                on);
    }

    /** @return the connector the switch selects */
    public BusConnector connector() {
        return oneOwnerConnection ? new Http2BusConnector(this) : new HelidonBusConnector(this);
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
