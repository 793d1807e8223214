package io.continuum.broker.relay.session;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.SessionLimits;
import io.continuum.broker.relay.transport.BusConnection;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.StreamRequest;
import io.continuum.broker.relay.transport.TransportException;

/**
 * Everything the broker writes on the session stream: its HEADERS with {@code hello} right behind, then frames
 * (heartbeats, stream answers, {@code draining}), then the request body's end. One lock, so each frame is
 * contiguous on the stream and nothing follows the end.
 * <p>
 * A router that stops reading the session stream (its window stays shut) blocks the write under the lock, and every
 * frame behind it waits. Two bounds keep that from wedging the broker: {@link #stalledSinceNanos()} tells the
 * session's timer how long the current write has waited (it ends the session as {@code idle_timeout} after the
 * idle timeout, docs/protocol.md 8a), and the frames waiting are bounded in number ({@link #limitWaiting}) and
 * bytes ({@link #MAX_WAITING_BYTES}): one more ends the session the same way instead of parking another thread.
 */
final class SessionWriter {
    private static final EventLog LOG = EventLog.of(BusSession.class);
    /** The most bytes of frames that may wait for the session stream at once. */
    static final long MAX_WAITING_BYTES = 4L * 1024 * 1024;
    /** Frames that may wait beyond one answer per stream {@code max_streams} allows: heartbeats, draining, slack. */
    static final int WAITING_SLACK_FRAMES = 1_024;

    private final SessionLife life;
    private final ReentrantLock lock = new ReentrantLock();
    /** When the write under the lock began, or 0 when none is under way. */
    private volatile long writingSinceNanos;
    private final AtomicInteger waitingFrames = new AtomicInteger();
    private final AtomicLong waitingBytes = new AtomicLong();
    private volatile int maxWaitingFrames = SessionLimits.DEFAULT_MAX_STREAMS + WAITING_SLACK_FRAMES;
    private volatile BusStream stream;
    /** Set once the request body ended (END_STREAM); from then on only the router's close is awaited. */
    private volatile boolean requestEnded;

    SessionWriter(SessionLife life) {
        this.life = life;
    }

    /**
     * Opens the session stream and writes {@code hello} right behind its HEADERS, never waiting for the response
     * head; null, with nothing written after the HEADERS, when the session ended meanwhile (no {@code hello}
     * after a shutdown).
     */
    BusStream open(BusConnection connection, StreamRequest request, Duration slotTimeout, Frame.Hello hello)
            throws TransportException {
        lock.lock();
        try {
            BusStream s = connection.open(request, slotTimeout);
            stream = s;
            if (life.ended()) {
                return null;
            }
            write(s, FrameCodec.encode(hello));
            return s;
        } finally {
            lock.unlock();
        }
    }

    BusStream stream() {
        return stream;
    }

    /** Once welcomed: at most one answer per stream {@code max_streams} allows, plus the slack, may wait. */
    void limitWaiting(int maxStreams) {
        maxWaitingFrames = maxStreams + WAITING_SLACK_FRAMES;
    }

    /** @return when the write now under way began ({@link System#nanoTime()}), or 0 when none is */
    long stalledSinceNanos() {
        return writingSinceNanos;
    }

    /** @return frames waiting for the session stream now, the one being written among them */
    int waitingFrames() {
        return waitingFrames.get();
    }

    /** Writes one frame, unless the session ended; a failed write is the connection's end, noticed elsewhere. */
    void send(Frame.ClientFrame frame) {
        send(frame, null);
    }

    /**
     * As {@link #send(Frame.ClientFrame)}; {@code written}, when not null, runs right before the frame is written,
     * and only if it is (not once the session ended): what counts a frame counts only frames the router is sent.
     */
    void send(Frame.ClientFrame frame, Runnable written) {
        BusStream s = stream;
        if (s == null || life.ended()) {
            return;
        }
        byte[] bytes = FrameCodec.encode(frame);
        int frames = waitingFrames.incrementAndGet();
        long queued = waitingBytes.addAndGet(bytes.length);
        try {
            if (frames > maxWaitingFrames || queued > MAX_WAITING_BYTES) {
                // The router takes nothing and frames pile up (answers to a flood of subscribes, say): one thread
                // and one frame more each. End the session instead; closing the connection wakes every waiter.
                life.end(life.resultSoFar(), EndReason.IDLE_TIMEOUT, "the router took no session frame while "
                        + frames + " frames (" + queued + " bytes) waited for it");
                return;
            }
            lock.lock();
            try {
                if (life.ended()) {
                    return;
                }
                if (written != null) {
                    written.run();
                }
                write(s, bytes);
            } catch (TransportException e) {
                LOG.debug("frame_write_failed").field("type", frame.type()).cause(e).log();
            } finally {
                lock.unlock();
            }
        } finally {
            waitingFrames.decrementAndGet();
            waitingBytes.addAndGet(-bytes.length);
        }
    }

    /** One write under the lock, timed for {@link #stalledSinceNanos()}. */
    private void write(BusStream s, byte[] bytes) throws TransportException {
        writingSinceNanos = Math.max(1, System.nanoTime());
        try {
            s.write(ByteBuffer.wrap(bytes));
        } finally {
            writingSinceNanos = 0;
        }
    }

    /** Writes one frame unless the request body has ended: the router then already knows the session is ending. */
    void sendBeforeEnd(Frame.ClientFrame frame) {
        lock.lock();
        try {
            if (!requestEnded) {
                send(frame);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ends the request body. A write stalled by a router that stopped reading must not hold the drain, so the lock
     * is waited for at most {@code bound}; without it the body is only marked ended.
     *
     * @return whether END_STREAM was written (or tried)
     */
    boolean endRequest(Duration bound) {
        boolean locked = false;
        try {
            locked = lock.tryLock(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            requestEnded = true;
            if (locked) {
                writingSinceNanos = Math.max(1, System.nanoTime());
                stream.endRequest();
            }
        } catch (TransportException e) {
            LOG.debug("end_request_failed").cause(e).log();
        } finally {
            writingSinceNanos = 0;
            if (locked) {
                lock.unlock();
            }
        }
        return locked;
    }

    boolean requestEnded() {
        return requestEnded;
    }
}
