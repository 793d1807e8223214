package io.continuum.broker.relay.transport;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * One HTTP/2 connection to the bus, carrying the session stream and every data stream.
 * Thread-safe. When it dies every open stream fails promptly with a typed exception.
 */
public interface BusConnection extends AutoCloseable {
    /**
     * Waits up to {@code slotTimeout} for a free slot under the peer's {@code MAX_CONCURRENT_STREAMS}
     * (the transport's own semaphore), then writes HEADERS (END_STREAM not set). Returns once the
     * HEADERS frame is written to the connection, so anything written to the connection afterwards
     * (for example a session frame) reaches the peer after it.
     *
     * @param request     method, path and headers
     * @param slotTimeout how long to wait for a free stream slot
     * @return the open stream
     * @throws SlotTimeoutException when no slot frees up in time
     * @throws TransportException   when the connection is closed or dies
     */
    default BusStream open(StreamRequest request, Duration slotTimeout) throws SlotTimeoutException, TransportException {
        return open(request, slotTimeout, () -> true);
    }

    /**
     * As {@link #open(StreamRequest, Duration)}, but asks {@code commit} once the slot is granted and right before
     * the HEADERS are written (no other stream's HEADERS in between): when it answers false the slot is given back
     * and nothing is written. A caller whose stream can be abandoned while it waits for a slot (revocation, an
     * unsubscribe) decides there, atomically with its own state, so an abandoned stream never reaches the wire.
     *
     * @param request     method, path and headers
     * @param slotTimeout how long to wait for a free stream slot
     * @param commit      called once, on the calling thread; must not block
     * @return the open stream, or {@code null} when {@code commit} answered false
     * @throws SlotTimeoutException when no slot frees up in time
     * @throws TransportException   when the connection is closed or dies
     */
    BusStream open(StreamRequest request, Duration slotTimeout, java.util.function.BooleanSupplier commit)
            throws SlotTimeoutException, TransportException;

    /** @return whether the connection is still alive (after the peer's graceful GOAWAY too, until it closes) */
    boolean isOpen();

    /**
     * Registers a listener that fires once when the peer's GOAWAY with NO_ERROR says it takes no new streams
     * (RFC 9113 section 6.8): streams at or below its last-stream-id run on until they end, streams above it fail
     * and {@link #open} refuses, both with {@link ConnectionLostException.Reason#GOING_AWAY}; once the last stream
     * is gone the connection closes itself ({@link #onClose} fires with that reason). A GOAWAY with an error code
     * is a dead connection instead: only {@link #onClose} fires. A listener registered after the GOAWAY fires at
     * once; one registered after the connection died never fires. It runs on the connection's reader thread, in
     * wire order with the frames around the GOAWAY, and must not block.
     *
     * @param listener told that the peer is going away
     */
    void onGoAway(Runnable listener);

    /**
     * Registers a listener that fires once when this connection's client stream ids are running out (RFC 9113
     * section 5.1.1: they end at 2^31-1; about 12 days at 1,000 opens a second): fewer than
     * {@code STREAM_IDS_RESERVE} are left, and opens go on working until the last. The session drains and moves to a
     * new connection. It runs on the opening thread, after the open returned its stream to nobody yet, and must not
     * block.
     *
     * @param listener told that the ids are running out
     */
    void onStreamIdsRunningOut(Runnable listener);

    /**
     * Registers a listener that fires exactly once when the connection dies (socket loss, GOAWAY with an error
     * code, TLS failure, keepalive timeout), closes after a graceful GOAWAY, or is closed locally. A listener
     * registered after that fires at once.
     *
     * @param listener receives the cause ({@link ConnectionLostException})
     */
    void onClose(Consumer<TransportException> listener);

    /** Closes the connection and fails every open stream. Idempotent. */
    @Override
    void close();
}
