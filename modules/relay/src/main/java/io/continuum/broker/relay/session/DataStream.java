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
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.api.RelayMetrics.Direction;
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
 *   OPENING --slot granted, HEADERS about to be written--> COMMITTED --stream_opened--> OPEN
 *   OPEN --(EOF, overflow, revocation, idle head, reset, 404, unsubscribe)--> CLOSED
 *   OPENING, COMMITTED --(refusal, revocation, unsubscribe, session end)--> CLOSED
 * </pre>
 * Exactly one of {@code stream_opened} / {@code stream_refused} is sent unless an
 * {@code unsubscribe} came first, and at most one {@code stream_closed} after it, never before it. A stream
 * aborted before COMMITTED never writes its HEADERS (the transport asks {@link #commit()} under its open lock);
 * one aborted in COMMITTED is reset and answered by its opener once the HEADERS are out, so the router never sees
 * HEADERS after the refusal. Every answer leaves only after the stream has left the session's table, so a
 * router may reuse the id, or use the freed {@code max_streams} place, as soon as it reads the answer. Threads (all
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

    enum State { OPENING, COMMITTED, OPEN, CLOSED }

    private final BusSession session;
    private final long streamId;
    private final Target target;
    private final PublisherKey key;
    private final long createdNanos = System.nanoTime();
    /** Set when a write to the publisher failed, before the queue is ended for it. */
    private volatile boolean publisherWriteFailed;
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
    /**
     * Guards the answers that can race the opener: whether {@code stream_opened} has been sent, a
     * {@code stream_closed} that must wait for it, and the refusal owed by a stream aborted in COMMITTED.
     */
    private final ReentrantLock answerLock = new ReentrantLock();
    private boolean openedSent;
    private boolean closedBeforeOpened;
    private Code closeBeforeOpened;
    private Code refusalAfterHeaders;
    private volatile BusStream stream;
    /** Set before the request body's END_STREAM is written (publisher EOF). */
    private volatile boolean requestEnded;
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
            s = session.connection().open(request(), session.timeouts().streamSlot(), this::commit);
        } catch (SlotTimeoutException e) {
            closeQuietly(socket);
            refuse(Code.TOO_MANY_STREAMS, "no free HTTP/2 stream slot within " + session.timeouts().streamSlot());
            return;
        } catch (TransportException e) {
            // The connection is going away; the session ends and answers nothing more.
            closeQuietly(socket);
            abortOpening(null);
            finishAbortedAfterCommit(null);
            return;
        }
        if (s == null) {
            return; // aborted (and answered) while it waited for a slot: no HEADERS were written
        }
        stream = s;
        queue = new ChunkQueue(session.limits().maxStreamBufferBytes(), session.budget());
        // HEADERS are on the connection: only now is stream_opened sent (section 5).
        if (!state.compareAndSet(State.COMMITTED, State.OPEN)) {
            finishAbortedAfterCommit(s);
            return;
        }
        answered.set(true);
        session.streamOpened(this);
        session.send(new Frame.StreamOpened(streamId));
        boolean closedMeanwhile;
        Code deferred;
        answerLock.lock();
        try {
            openedSent = true;
            closedMeanwhile = closedBeforeOpened;
            deferred = closeBeforeOpened;
        } finally {
            answerLock.unlock();
        }
        if (closedMeanwhile) {
            // closed (revoked, say) while stream_opened was on its way: out of the table, then its stream_closed
            session.streamEnded(this, true, () -> sendClosed(deferred));
            return;
        }
        Thread.ofVirtual().name("stream-" + streamId + "-up-read").start(this::pumpPublisherToQueue);
        Thread.ofVirtual().name("stream-" + streamId + "-up-write").start(this::pumpQueueToRouter);
        pumpRouterToPublisher();
    }

    /**
     * Asked by the transport once the HTTP/2 slot is granted, right before the HEADERS are written: false when the
     * stream was aborted while it waited, so nothing of it reaches the wire.
     */
    private boolean commit() {
        return state.compareAndSet(State.OPENING, State.COMMITTED);
    }

    /**
     * The opener's side of an abort that came after {@link #commit()}: the HEADERS may be on the wire, so the
     * stream is reset first, then the refusal the abort left (if any) is sent behind them.
     */
    private void finishAbortedAfterCommit(BusStream s) {
        state.compareAndSet(State.COMMITTED, State.CLOSED); // unless an abort did: the connection died under it
        if (s != null) {
            s.cancel();
        }
        closeQuietly(socket);
        ChunkQueue q = queue;
        if (q != null) {
            q.close();
        }
        Code refusal;
        answerLock.lock();
        try {
            refusal = refusalAfterHeaders;
            refusalAfterHeaders = null;
        } finally {
            answerLock.unlock();
        }
        session.streamEnded(this, false, () -> {
            if (refusal != null) {
                sendRefused(refusal, "target no longer advertised");
            }
        });
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
                    // A queue ended by a failed write toward the publisher refuses offers too: that is the
                    // socket error ending the stream (upstream_closed, by the writer), not an overflow.
                    if (state.get() == State.OPEN && !publisherWriteFailed) {
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
            requestEnded = true;
            s.endRequest();
            // Section 6, publisher EOF. The request body is complete; a router ends its response once it has read
            // the body up to END_STREAM. That end is awaited (bounded) before any reset, because HTTP/2 servers
            // may drop request DATA their application has not read yet when RST_STREAM arrives (Helidon 4.5.0's
            // does). Meanwhile the stream keeps its place in the table and its HTTP/2 slot, so stream_closed is
            // only sent once both are free.
            s.awaitClosed(session.timeouts().responseHead());
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
            // Router reset the stream (report nothing) or the connection died (the session ends). Once the
            // request body has ended, the upstream writer reports upstream_closed: a router's reset then only
            // released the stream.
            if (!requestEnded) {
                close(null);
            }
        } catch (IOException e) {
            // The publisher socket failed (section 6: a socket error, as EOF): flush what is queued, end the
            // request body and report upstream_closed. The reader may still get bytes a moment longer.
            publisherWriteFailed = true;
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
        boolean committed = false;
        if (!state.compareAndSet(State.OPENING, State.CLOSED)) {
            answerLock.lock();
            try {
                committed = state.compareAndSet(State.COMMITTED, State.CLOSED);
                if (committed && refusal != null && answered.compareAndSet(false, true)) {
                    refusalAfterHeaders = refusal; // the opener sends it once its HEADERS are out and reset
                }
            } finally {
                answerLock.unlock();
            }
            if (!committed) {
                return false;
            }
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
        if (!committed) {
            // (a stream aborted once committed leaves the table with its answer from its opener, behind the reset)
            session.streamEnded(this, false, () -> {
                if (refusal != null && answered.compareAndSet(false, true)) {
                    sendRefused(refusal, "target no longer advertised");
                }
            });
        }
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
        session.streamEnded(this, false, () -> {
            if (answered.compareAndSet(false, true)) {
                sendRefused(code, reason);
            }
        });
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
            // After END_STREAM (upstream_closed) too, when the router has not ended its response: the reset then
            // only releases the stream, and the slot is free before stream_closed says the stream is gone.
            s.cancel();
        }
        closeQuietly(socket);
        if (code != null) {
            session.metrics().streamClosed(code);
            if (code == Code.BUFFER_OVERFLOW) {
                session.metrics().overflowClose();
            }
            LOG.info("stream_closed").field("stream_id", streamId).field("code", code.wire())
                    .field("bytes_to_router", bytesToRouter.get()).field("bytes_to_publisher", bytesToPublisher.get()).log();
        }
        answerLock.lock();
        try {
            if (!openedSent) {
                // the opener is still sending stream_opened: it takes the stream out of the table and sends this
                // stream_closed behind it (a close must never reach the router before the open it closes)
                closedBeforeOpened = true;
                closeBeforeOpened = code;
                return true;
            }
        } finally {
            answerLock.unlock();
        }
        session.streamEnded(this, true, () -> sendClosed(code));
        return true;
    }

    private void sendClosed(Code code) {
        if (code != null) {
            session.send(new Frame.StreamClosed(streamId, code));
        }
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
