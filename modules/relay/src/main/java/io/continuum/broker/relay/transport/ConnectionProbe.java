package io.continuum.broker.relay.transport;

import java.time.Duration;

/**
 * What a test may read of a bus connection beyond the {@link BusConnection} seam, and the seams where a test
 * makes the peer's frames arrive at an exact moment: the transport's tests use nothing else of the connection,
 * so they hold whatever implements it.
 */
interface ConnectionProbe {
    /** @return stream slots in use */
    long streamsInUse();

    /** @return opens parked waiting for a stream slot */
    long slotWaiters();

    /** @return the peer's current SETTINGS_MAX_CONCURRENT_STREAMS */
    long peerMaxConcurrentStreams();

    /** @return whether the connection is still usable (as {@link BusConnection#isOpen()}) */
    boolean isOpen();

    /**
     * @return DATA bytes received on the connection that neither a stream's release nor a reset or a dropped frame
     *         has credited back yet (zero once every stream is drained or gone)
     */
    long connectionBytesUncredited();

    /**
     * Sends a PING and waits for its acknowledgement.
     *
     * @return whether the ACK arrived in time
     */
    boolean ping(Duration timeout) throws InterruptedException;

    /** @return e.g. {@code TLSv1.3 alpn=h2 nodelay=true} */
    String socketDescription();

    /** @return streams the connection still keeps state for: finished ones must not pile up on a months-long one */
    int streamsTracked();

    /**
     * @return signals the connection gave its streams' readers (bytes arrived for a reader that waited): at most one
     *         per wait, however many DATA frames came
     */
    long readerWakeUps();

    /** @return signals the connection gave its streams' writers (the window a writer waited for opened) */
    long writerWakeUps();

    /** @return the segments of router bytes {@code stream} holds unread: bytes, not frames, count */
    int inboundSegments(BusStream stream);

    /** Moves the next client stream id forward (odd): a test of what happens as the ids run out. */
    void startStreamIdsAt(int nextId);

    // Test seams: each hook runs on the thread and at the point named, so a test can make the peer's frames arrive
    // exactly there; null removes it. Reads of an unset seam cost one volatile read.

    /**
     * Runs on the cancelling thread right after {@code stream}'s RST_STREAM reached the socket, before its slot is
     * freed.
     */
    void afterResetWritten(BusStream stream, Runnable hook);

    /** Runs on the opening thread right after a new stream's HEADERS reached the socket, before the open returns. */
    void afterHeadersWritten(Runnable hook);

    /**
     * Runs on a writing thread after it took a DATA frame's bytes from the send windows and before the frame is
     * handed to the frame writer (where a reset in between must give the bytes back).
     */
    void beforeDataAdded(Runnable hook);

    /**
     * Runs on the closing thread right after this side's GOAWAY reached the socket (or its linger ran out), before
     * the socket is closed.
     */
    void afterGoAwayWritten(Runnable hook);
}
