package io.continuum.broker.relay.stream;

import java.time.Duration;
import java.util.function.BooleanSupplier;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.TransportException;

/**
 * What a {@link DataStream} may ask of its session, and nothing else: the dial, its HTTP/2 stream on the session's
 * connection, its buffer, the clocks it runs on, and the three ways it reports back (opened, refused, ended). The
 * stream never sees the session, its credential or its other streams; the session's stream table implements this.
 */
public interface StreamContext {
    /** The target checks and the dial (rows 4-10 of bus-protocol-v1.md section 5). */
    TargetDialer dialer();

    /**
     * Opens the stream's HTTP/2 stream on the session's connection, waiting at most {@link #slotTimeout()} for a
     * slot; {@code commit} is asked once the slot is granted, right before the HEADERS.
     *
     * @return the stream, or null when {@code commit} said no (nothing was written)
     */
    BusStream open(long streamId, BooleanSupplier commit) throws TransportException;

    /** How long an open waits for an HTTP/2 stream slot (row 11). */
    Duration slotTimeout();

    /** How long after the slot grant the router's response head may take (R-OPEN). */
    Duration responseHeadTimeout();

    /** The session's readiness loop, which reads every open stream's publisher socket. */
    PublisherReads publisherReads();

    /** A queue toward the router, charged against the negotiated stream budget and the session's. */
    ChunkQueue newQueue();

    RelayMetrics metrics();

    /**
     * The one call of a {@code stream_closed}: written on the session stream and counted, unless the session ended
     * (then the frame is dropped and not counted: {@code stream_closes_total} counts frames the router is sent).
     */
    void closed(long streamId, Code code);

    /**
     * The stream is open: counted, shown on the status page, and {@code stream_opened} sent. Called once the
     * HEADERS are on the connection.
     */
    void opened(DataStream stream);

    /** The one call of a refusal: counted, logged (rate-limited), remembered for the status page, answered. */
    void refused(long streamId, Code code, String reason);

    /**
     * The stream leaves the session's table, then {@code answer} (its {@code stream_refused} or
     * {@code stream_closed}, if any) is sent. In that order, because a router may reuse the id, or the freed
     * {@code max_streams} place, as soon as it reads the answer; and a drain that finds the table empty waits
     * until the answer is written.
     */
    void ended(DataStream stream, boolean wasOpen, Runnable answer);
}
