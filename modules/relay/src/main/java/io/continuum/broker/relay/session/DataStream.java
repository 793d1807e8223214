package io.continuum.broker.relay.session;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.protocol.BusProtocol;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.RelayMetrics;
import io.continuum.broker.relay.RelayMetrics.Direction;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.Header;
import io.continuum.broker.relay.transport.ResponseHead;
import io.continuum.broker.relay.transport.SlotTimeoutException;
import io.continuum.broker.relay.transport.StreamRequest;
import io.continuum.broker.relay.transport.TransportException;

/**
 * One subscription: a publisher socket relayed over one HTTP/2 data stream (bus-protocol-v1.md
 * sections 5 and 6). An explicit state machine:
 * <pre>
 *   OPENING --stream_opened--> OPEN --(EOF, overflow, revocation, idle head, reset, 404, unsubscribe)--> CLOSED
 *   OPENING --(refusal, unsubscribe, session end)--> CLOSED
 * </pre>
 * Exactly one of {@code stream_opened} / {@code stream_refused} is sent unless an
 * {@code unsubscribe} came first, and at most one {@code stream_closed} after it. Threads (all
 * virtual): the opener (checks, dial, HEADERS), then the upstream reader (publisher socket to
 * queue, never blocked), the upstream writer (queue to the HTTP/2 stream), and the downstream
 * pump (HTTP/2 stream to the publisher socket, window replenished only as bytes reach the socket).
 */
final class DataStream {
    private static final EventLog LOG = EventLog.of(DataStream.class);
    /** Publisher sockets are read in large chunks; each chunk costs 64 bytes of budget. */
    static final int READ_CHUNK_BYTES = 64 * 1024;
    /** What an idle stream's publisher read waits with (see pumpPublisherToQueue). */
    static final int IDLE_READ_BYTES = 2 * 1024;

    enum State { OPENING, OPEN, CLOSED }

    private final BusSession session;
    private final long streamId;
    private final Target target;
    private final PublisherKey key;
    private final long createdNanos = System.nanoTime();
    private final AtomicReference<State> state = new AtomicReference<>(State.OPENING);
    private final AtomicBoolean answered = new AtomicBoolean();
    private final AtomicLong bytesToRouter = new AtomicLong();
    private final AtomicLong bytesToPublisher = new AtomicLong();
    private volatile Thread opener;
    /**
     * Guards {@link #dialing}: the opener may be interrupted (to abandon the dial) only while it dials.
     * Once it opens the HTTP/2 stream it must not be: an interrupt inside the transport's open fails
     * the whole bus connection, every stream of the session with it.
     */
    private final ReentrantLock interruptLock = new ReentrantLock();
    private boolean dialing;
    private volatile Socket socket;
    private volatile BusStream stream;
    private volatile ChunkQueue queue;

    DataStream(BusSession session, long streamId, Target target) {
        this.session = session;
        this.streamId = streamId;
        this.target = target;
        PublisherKey k = null;
        if (target instanceof Target.ZmqTcp t) {
            try {
                k = PublisherKey.of(t.namespace(), t.host(), t.port());
            } catch (IllegalArgumentException e) {
                k = null;
            }
        }
        this.key = k;
    }

    long streamId() {
        return streamId;
    }

    State state() {
        return state.get();
    }

    PublisherKey key() {
        return key;
    }

    Duration age() {
        return Duration.ofNanos(System.nanoTime() - createdNanos);
    }

    long bytesToRouter() {
        return bytesToRouter.get();
    }

    long bytesToPublisher() {
        return bytesToPublisher.get();
    }

    long bufferedBytes() {
        ChunkQueue q = queue;
        return q == null ? 0 : q.usedBytes();
    }

    /** Starts the opener thread. */
    void start() {
        opener = Thread.ofVirtual().name("stream-" + streamId + "-open").start(this::open);
    }

    private void open() {
        TargetDialer.DialResult result;
        setDialing(true);
        try {
            result = session.dialer().dial(target);
        } catch (InterruptedException e) {
            abortOpening(null);
            return;
        } catch (RuntimeException e) {
            LOG.warn("dial_failed").field("stream_id", streamId).cause(e).log();
            result = new TargetDialer.DialResult.Refused(Code.INTERNAL_ERROR, "internal error");
        } finally {
            setDialing(false);
        }
        switch (result) {
            case TargetDialer.DialResult.Refused r -> {
                refuse(r.code(), r.reason());
                return;
            }
            case TargetDialer.DialResult.Connected c -> socket = c.socket();
        }
        if (state.get() != State.OPENING) {
            closeQuietly(socket);
            return;
        }
        BusStream s;
        try {
            s = session.connection().open(request(), session.timeouts().streamSlot());
        } catch (SlotTimeoutException e) {
            closeQuietly(socket);
            refuse(Code.TOO_MANY_STREAMS, "no free HTTP/2 stream slot within " + session.timeouts().streamSlot());
            return;
        } catch (TransportException e) {
            // The connection is going away; the session ends and answers nothing more.
            closeQuietly(socket);
            abortOpening(null);
            return;
        }
        stream = s;
        queue = new ChunkQueue(session.limits().maxStreamBufferBytes(), session.budget());
        // HEADERS are on the connection: only now is stream_opened sent (section 5).
        if (!state.compareAndSet(State.OPENING, State.OPEN) || !answered.compareAndSet(false, true)) {
            s.cancel();
            closeQuietly(socket);
            queue.close();
            return;
        }
        session.streamOpened(this);
        session.send(new Frame.StreamOpened(streamId));
        Thread.ofVirtual().name("stream-" + streamId + "-up-read").start(this::pumpPublisherToQueue);
        Thread.ofVirtual().name("stream-" + streamId + "-up-write").start(this::pumpQueueToRouter);
        pumpRouterToPublisher();
    }

    private StreamRequest request() {
        return new StreamRequest("POST", BusProtocol.streamPath(streamId), List.of(
                Header.bearer(session.credential()),
                Header.of(BusProtocol.SESSION_ID_HEADER, session.sessionId()),
                Header.of("content-type", BusProtocol.STREAM_CONTENT_TYPE),
                Header.of("user-agent", session.userAgent())));
    }

    /**
     * The read size of a busy stream: 64 KiB, but never more than a quarter of the stream's budget (less the
     * per-chunk charge), so one read of a burst cannot overflow a stream whose router keeps up: at the 16 KiB
     * minimum budget a 64 KiB read would be charged more than the whole budget at once (R-BUF 1, 3).
     */
    static int busyReadBytes(int streamBudgetBytes) {
        int quarter = (streamBudgetBytes - ChunkQueue.CHUNK_OVERHEAD_BYTES) / 4;
        return Math.clamp(quarter, IDLE_READ_BYTES, READ_CHUNK_BYTES);
    }

    /** Publisher to router, part 1: read the socket continuously, never back-pressured (R-BUF 4). */
    private void pumpPublisherToQueue() {
        ChunkQueue q = queue;
        long nearBudgetBytes = (long) q.limitBytes() * RelayMetrics.NEAR_BUDGET_PERCENT / 100;
        boolean nearBudget = false;
        // An idle stream waits in read() with a small buffer; a read that fills it switches to the 64 KiB one
        // until a read returns less than the small size again. The socket is read just as continuously, and
        // an idle stream holds 2 KiB instead of 64 KiB (1,000 idle streams: 62 MiB less heap).
        byte[] idle = new byte[IDLE_READ_BYTES];
        byte[] busy = null;
        try {
            InputStream in = socket.getInputStream();
            while (true) {
                byte[] buf = busy != null ? busy : idle;
                int n = in.read(buf);
                if (n < 0) {
                    break;
                }
                if (n == 0) {
                    continue;
                }
                if (!q.offer(Arrays.copyOf(buf, n))) {
                    if (state.get() == State.OPEN) {
                        close(Code.BUFFER_OVERFLOW);
                    }
                    return;
                }
                if (!nearBudget && q.usedBytes() >= nearBudgetBytes) {
                    nearBudget = true;
                    session.metrics().streamNearBudget();
                }
                if (busy == null && n == buf.length) {
                    busy = new byte[busyReadBytes(q.limitBytes())];
                } else if (busy != null && n < IDLE_READ_BYTES) {
                    busy = null;
                }
            }
        } catch (IOException e) {
            if (state.get() != State.OPEN) {
                return;
            }
            LOG.debug("publisher_read_failed").field("stream_id", streamId).cause(e).log();
        }
        // EOF or socket error: flush what is queued, end the request body, report upstream_closed.
        q.end();
    }

    /** Publisher to router, part 2: hand queued chunks to the HTTP/2 stream in order. */
    private void pumpQueueToRouter() {
        ChunkQueue q = queue;
        BusStream s = stream;
        try {
            while (true) {
                // a writer that fell behind takes every queued chunk (up to 64 KiB) in one write
                ChunkQueue.Batch batch = q.takeBatch(READ_CHUNK_BYTES);
                if (batch == null) {
                    break;
                }
                try {
                    s.write(ByteBuffer.wrap(batch.bytes()));
                } finally {
                    q.written(batch);
                }
                bytesToRouter.addAndGet(batch.bytes().length);
                session.metrics().relayed(Direction.UPSTREAM_TO_ROUTER, batch.bytes().length);
            }
            if (q.isClosed() || state.get() != State.OPEN) {
                return;
            }
            s.endRequest();
            close(Code.UPSTREAM_CLOSED);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (TransportException e) {
            // Reset by the router, or the connection died: the downstream pump decides what to report.
            LOG.debug("stream_write_failed").field("stream_id", streamId).cause(e).log();
            close(null);
        }
    }

    /**
     * Router to publisher: the response head within 10 s of the slot grant (R-OPEN: the deadline includes any
     * wait inside the HTTP/2 client after the grant), then the body to the socket (section 6).
     */
    private void pumpRouterToPublisher() {
        BusStream s = stream;
        ResponseHead head;
        try {
            head = s.awaitResponseHead(remainingHeadTime(s));
        } catch (TimeoutException e) {
            close(Code.IDLE_TIMEOUT);
            return;
        } catch (TransportException e) {
            close(null);
            return;
        }
        if (head.status() != 200) {
            // 404 unknown_stream (and any other refusal of the stream): reset, close, report nothing.
            LOG.debug("data_stream_rejected").field("stream_id", streamId).field("status", head.status()).log();
            close(null);
            return;
        }
        try {
            OutputStream out = socket.getOutputStream();
            while (true) {
                ByteBuffer chunk = s.read();
                if (chunk == null) {
                    // Router ended its body: half-close toward the publisher, keep relaying the other way.
                    socket.shutdownOutput();
                    return;
                }
                int n = chunk.remaining();
                if (chunk.hasArray()) {
                    out.write(chunk.array(), chunk.arrayOffset() + chunk.position(), n);
                } else {
                    byte[] copy = new byte[n];
                    chunk.get(copy);
                    out.write(copy);
                }
                out.flush();
                s.release(n);
                bytesToPublisher.addAndGet(n);
                session.metrics().relayed(Direction.ROUTER_TO_UPSTREAM, n);
            }
        } catch (TransportException e) {
            // Router reset the stream (report nothing) or the connection died (the session ends).
            close(null);
        } catch (IOException e) {
            // The publisher socket failed: the upstream reader sees it too and reports upstream_closed.
            ChunkQueue q = queue;
            if (q != null) {
                q.end();
            }
        }
    }

    private Duration remainingHeadTime(BusStream s) {
        long elapsed = System.nanoTime() - s.slotGrantedNanos();
        return session.timeouts().responseHead().minusNanos(elapsed);
    }

    /**
     * The router unsubscribed: abort an opening stream or reset an open one, silently.
     */
    void unsubscribe() {
        if (!abortOpening(null)) {
            close(null);
        }
    }

    /**
     * The target is no longer advertised (section 6, revocation).
     *
     * @return whether this revoked the stream (false: it was already closing for another reason)
     */
    boolean revoke() {
        return abortOpening(Code.TARGET_NOT_ADVERTISED) || close(Code.TARGET_NOT_ADVERTISED);
    }

    /**
     * The session ended: everything closes with it, nothing is reported (section 4 item 7).
     */
    void closeWithSession() {
        answered.set(true);
        if (!abortOpening(null)) {
            close(null);
        }
    }

    /**
     * Aborts a stream that is still opening.
     *
     * @param refusal code to answer with, or null to abort silently
     * @return false when the stream was not opening any more
     */
    private boolean abortOpening(Code refusal) {
        if (!state.compareAndSet(State.OPENING, State.CLOSED)) {
            return false;
        }
        interruptLock.lock();
        try {
            Thread t = opener;
            if (dialing && t != null && t != Thread.currentThread()) {
                t.interrupt();
            }
        } finally {
            interruptLock.unlock();
        }
        closeQuietly(socket);
        if (refusal != null && answered.compareAndSet(false, true)) {
            sendRefused(refusal, "target no longer advertised");
        }
        session.streamEnded(this, false);
        return true;
    }

    /** Marks the dial phase; leaving it clears an interrupt that raced with the dial's end. */
    private void setDialing(boolean value) {
        interruptLock.lock();
        try {
            dialing = value;
            if (!value) {
                Thread.interrupted();
            }
        } finally {
            interruptLock.unlock();
        }
    }

    private void refuse(Code code, String reason) {
        if (!state.compareAndSet(State.OPENING, State.CLOSED)) {
            return;
        }
        if (answered.compareAndSet(false, true)) {
            sendRefused(code, reason);
        }
        session.streamEnded(this, false);
    }

    private void sendRefused(Code code, String reason) {
        session.refused(streamId, code, reason);
    }

    /**
     * Ends an open stream once: resets the HTTP/2 stream, closes the socket, and reports
     * {@code stream_closed} with {@code code} unless it is null.
     */
    private boolean close(Code code) {
        if (!state.compareAndSet(State.OPEN, State.CLOSED)) {
            return false;
        }
        ChunkQueue q = queue;
        if (q != null) {
            q.close();
        }
        BusStream s = stream;
        if (s != null) {
            if (code == Code.UPSTREAM_CLOSED) {
                // The request body is complete (END_STREAM sent): give the router time to read it and end
                // its side before the stream is reset, so the publisher's last bytes are not discarded.
                Duration grace = session.timeouts().responseHead();
                Thread.ofVirtual().name("stream-" + streamId + "-linger").start(() -> {
                    try {
                        Thread.sleep(grace);
                    } catch (InterruptedException ignored) {
                        // reset now
                    }
                    s.cancel();
                });
            } else {
                s.cancel();
            }
        }
        closeQuietly(socket);
        if (code != null) {
            session.metrics().streamClosed(code);
            if (code == Code.BUFFER_OVERFLOW) {
                session.metrics().overflowClose();
            }
            session.send(new Frame.StreamClosed(streamId, code));
            LOG.info("stream_closed").field("stream_id", streamId).field("code", code.wire())
                    .field("bytes_to_router", bytesToRouter.get()).field("bytes_to_publisher", bytesToPublisher.get()).log();
        }
        session.streamEnded(this, true);
        return true;
    }

    private static void closeQuietly(Socket s) {
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }
}
