package io.continuum.broker.relay.transport;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/**
 * One full-duplex HTTP/2 stream. One writer thread and one reader thread may use it at the same
 * time; {@link #cancel()} and {@link #release(int)} may be called from any thread.
 */
public interface BusStream {
    /** @return the HTTP/2 stream id */
    long id();

    /**
     * When this stream's slot under {@code MAX_CONCURRENT_STREAMS} was granted, on the
     * {@link System#nanoTime()} clock. R-OPEN's response-head deadline counts from here: it includes
     * any time the request waited inside the HTTP/2 client after the grant, before its HEADERS were written.
     *
     * @return the grant instant in nanoTime units
     */
    long slotGrantedNanos();

    /**
     * Writes request body bytes (no END_STREAM). Blocks on flow control only as long as the peer's
     * windows require, with no time limit, and never holds back other streams while blocked.
     *
     * @param data bytes to send; fully consumed on return
     * @throws StreamResetException   when the stream was reset (by the peer or {@link #cancel()})
     * @throws ConnectionLostException when the connection died
     * @throws TransportException      when the request side is already ended
     */
    void write(ByteBuffer data) throws TransportException;

    /**
     * Adds all of {@code data} as DATA for the connection's next socket write if both windows cover it now and no
     * other write of this stream is under way; otherwise adds nothing. It never waits for the peer's windows and
     * never touches the socket: the bytes go out at the next {@link #flush} (this stream's or any other's), so a
     * caller that adds for several streams writes them all with one system call.
     *
     * @param data bytes to send, at most 64 KiB; fully consumed when it returns true, untouched when false
     * @return whether the bytes were added
     * @throws StreamResetException    when the stream was reset (by the peer or {@link #cancel()})
     * @throws ConnectionLostException when the connection died
     * @throws TransportException      when the request side is already ended
     */
    boolean tryAdd(ByteBuffer data) throws TransportException;

    /**
     * Writes to the socket everything added to the connection so far, every stream's. It may wait for the socket
     * (a full TCP send buffer), never for a window.
     *
     * @throws ConnectionLostException when the write failed (the connection is lost)
     */
    void flush() throws TransportException;

    /**
     * Ends the request body (END_STREAM: half-close). Idempotent.
     *
     * @throws TransportException when the stream or connection is gone
     */
    void endRequest() throws TransportException;

    /**
     * Waits for the response status and headers.
     *
     * @param timeout how long to wait
     * @return the head
     * @throws TimeoutException   when it did not arrive in time (the stream stays open)
     * @throws TransportException when the stream was reset or the connection died
     */
    ResponseHead awaitResponseHead(Duration timeout) throws TimeoutException, TransportException;

    /**
     * Next response body chunk, or {@code null} at END_STREAM. Blocks until data arrives. The bytes of
     * the returned chunk keep counting against the receive window until {@link #release(int)}.
     *
     * @return a chunk, or {@code null} once the response body has ended
     * @throws StreamResetException    when the peer reset the stream or it was cancelled
     * @throws ConnectionLostException when the connection died
     */
    ByteBuffer read() throws TransportException;

    /**
     * Replenishes the stream's (and the connection's) receive window by {@code n} bytes. Call only once
     * those bytes have been written onward (to the publisher socket, spec section 6).
     *
     * @param n bytes consumed, at least 1
     */
    void release(int n);

    /**
     * Waits until the stream has closed: END_STREAM both ways, a reset, or the connection's death. Unlike
     * {@link #read()} it consumes nothing, so it may wait beside a reader.
     *
     * @param timeout how long to wait
     * @return whether it closed in time
     * @throws InterruptedException when interrupted
     */
    boolean awaitClosed(Duration timeout) throws InterruptedException;

    /**
     * @return why the stream ended, if it did not end by END_STREAM both ways: a reset (either side's: a
     *         {@link MalformedResponseException} for one this side made because of the peer's frames), or the
     *         connection's death; null while it is open or after it closed normally
     */
    TransportException failure();

    /**
     * Resets the stream (RST_STREAM CANCEL) unless it already ended, releases its slot, and wakes this
     * stream's own blocked reader and writer (they throw {@link StreamResetException}). Idempotent.
     */
    void cancel();
}
