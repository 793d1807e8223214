package io.continuum.broker.relay.session;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.relay.transport.BusConnection;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.StreamRequest;
import io.continuum.broker.relay.transport.TransportException;

/**
 * Everything the broker writes on the session stream: its HEADERS with {@code hello} right behind, then frames
 * (heartbeats, stream answers, {@code draining}), then the request body's end. One lock, so each frame is
 * contiguous on the stream and nothing follows the end.
 */
final class SessionWriter {
    private static final EventLog LOG = EventLog.of(BusSession.class);

    private final SessionLife life;
    private final ReentrantLock lock = new ReentrantLock();
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
            s.write(ByteBuffer.wrap(FrameCodec.encode(hello)));
            return s;
        } finally {
            lock.unlock();
        }
    }

    BusStream stream() {
        return stream;
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
        lock.lock();
        try {
            if (life.ended()) {
                return;
            }
            if (written != null) {
                written.run();
            }
            s.write(ByteBuffer.wrap(bytes));
        } catch (TransportException e) {
            LOG.debug("frame_write_failed").field("type", frame.type()).cause(e).log();
        } finally {
            lock.unlock();
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
                stream.endRequest();
            }
        } catch (TransportException e) {
            LOG.debug("end_request_failed").cause(e).log();
        } finally {
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
