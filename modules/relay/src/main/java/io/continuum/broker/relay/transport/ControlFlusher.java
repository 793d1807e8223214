package io.continuum.broker.relay.transport;

import java.io.IOException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.continuum.broker.h2.Http2Writer;

/**
 * Writes what the connection's reader added to the frame writer (PING and SETTINGS acknowledgements, WINDOW_UPDATEs,
 * RST_STREAMs), on a virtual thread of its own: the reader never blocks on the socket, so a router whose TCP window
 * is full cannot stop the broker from reading (its frames, the PING acknowledgements the keepalive waits for). What
 * waits unwritten is counted: past {@link #MAX_QUEUED} requests the connection ends with ENHANCE_YOUR_CALM, the
 * answer to a PING or SETTINGS flood whose answers the router does not read (CVE-2019-9512, CVE-2019-9515; Netty's
 * bound on queued control frames, 10,000).
 */
final class ControlFlusher {
    /** Control frames the reader may have waiting for the socket: Netty's {@code maxQueuedControlFrames}. */
    static final int MAX_QUEUED = 10_000;

    /** What the flusher reports: a failed write ends the connection. */
    interface Failure {
        void writeFailed(IOException e);
    }

    private final Http2Writer frames;
    private final Failure failure;
    private final Semaphore requested = new Semaphore(0);
    /** Whether a wake-up is already on its way: a burst of answers costs one unpark of the flusher, not one each. */
    private final AtomicBoolean wakeUpPending = new AtomicBoolean();
    /** Requests added and not yet written. */
    private final AtomicInteger queued = new AtomicInteger();
    private volatile boolean stopped;

    ControlFlusher(Http2Writer frames, Failure failure) {
        this.frames = frames;
        this.failure = failure;
        Thread.ofVirtual().name("bus-h2-flusher").start(this::run);
    }

    /**
     * A frame was added for the socket: write it soon, on the flusher's thread.
     *
     * @return false when more than {@link #MAX_QUEUED} wait unwritten: the peer does not read its answers
     */
    boolean request() {
        int waiting = queued.incrementAndGet();
        if (wakeUpPending.compareAndSet(false, true)) {
            requested.release();
        }
        return waiting <= MAX_QUEUED;
    }

    /** @return answers added and not yet written */
    int queued() {
        return queued.get();
    }

    void stop() {
        stopped = true;
        requested.release();
    }

    private void run() {
        try {
            while (true) {
                requested.acquire();
                wakeUpPending.set(false); // before the flush: what is added from now on wakes the next round
                if (stopped) {
                    return;
                }
                int taken = queued.get();
                frames.flush(); // what was added before this point is on the socket when it returns
                queued.addAndGet(-taken);
            }
        } catch (InterruptedException e) {
            // stopping
        } catch (IOException e) {
            if (!stopped) {
                failure.writeFailed(e);
            }
        }
    }
}
