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

    /** @return whether the connection is still usable */
    boolean isOpen();

    /**
     * Registers a listener that fires exactly once when the connection dies (socket loss, GOAWAY,
     * TLS failure, keepalive timeout) or is closed locally. A listener registered after that fires at once.
     *
     * @param listener receives the cause ({@link ConnectionLostException})
     */
    void onClose(Consumer<TransportException> listener);

    /** Closes the connection and fails every open stream. Idempotent. */
    @Override
    void close();
}
