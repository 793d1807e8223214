package io.continuum.broker.relay.stream;

import java.io.IOException;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.dial.DialResult;
import io.continuum.broker.relay.dial.DialTarget;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.ConnectionLostException;
import io.continuum.broker.relay.transport.SlotTimeoutException;
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
 * virtual): the opener (checks, dial, HEADERS), then the three of {@link StreamPumps}. The stream asks its session
 * only what {@link StreamContext} offers.
 */
public final class DataStream implements StreamPumps.Closer {
    private static final EventLog LOG = EventLog.of(DataStream.class);

    enum State { OPENING, COMMITTED, OPEN, CLOSED }

    private final StreamContext context;
    private final long streamId;
    private final DialTarget target;
    private final PublisherKey key;
    private final long createdNanos = System.nanoTime();
    private final AtomicReference<State> state = new AtomicReference<>(State.OPENING);
    private final AtomicBoolean answered = new AtomicBoolean();
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
    /** Set once the HTTP/2 stream is open, before stream_opened. */
    private volatile StreamPumps pumps;

    public DataStream(StreamContext context, long streamId, Target target) {
        this.context = context;
        this.streamId = streamId;
        // read once, now: a revocation must find the key while the dial is still running
        this.target = DialTarget.of(target);
        this.key = this.target instanceof DialTarget.Publisher p ? p.key() : null;
    }

    public long streamId() {
        return streamId;
    }

    State state() {
        return state.get();
    }

    /** The opener thread once {@link #start()} ran, else null (tests join it). */
    Thread opener() {
        return opener;
    }

    public PublisherKey key() {
        return key;
    }

    public Duration age() {
        return Duration.ofNanos(System.nanoTime() - createdNanos);
    }

    public long bytesToRouter() {
        StreamPumps p = pumps;
        return p == null ? 0 : p.bytesToRouter();
    }

    public long bytesToPublisher() {
        StreamPumps p = pumps;
        return p == null ? 0 : p.bytesToPublisher();
    }

    public long bufferedBytes() {
        StreamPumps p = pumps;
        return p == null ? 0 : p.queue().usedBytes();
    }

    /** Starts the opener thread. */
    public void start() {
        opener = Thread.ofVirtual().name("stream-" + streamId + "-open").start(this::open);
    }

    private void open() {
        socket = dial();
        if (socket == null) {
            return; // refused or aborted, and answered if owed
        }
        if (state.get() != State.OPENING) {
            closeSocket();
            return;
        }
        BusStream s;
        try {
            s = context.open(streamId, this::commit);
        } catch (SlotTimeoutException e) {
            closeSocket();
            refuse(Code.TOO_MANY_STREAMS, "no free HTTP/2 stream slot within " + context.slotTimeout());
            return;
        } catch (TransportException e) {
            if (ConnectionLostException.goingAway(e)) {
                // The router's graceful GOAWAY came first: the session drains, and this subscribe is answered so.
                closeSocket();
                refuse(Code.DRAINING, "the router's GOAWAY: no new streams on this connection");
                return;
            }
            // The connection is gone; the session ends and answers nothing more.
            closeSocket();
            abortOpening(null);
            finishAbortedAfterCommit(null);
            return;
        }
        if (s == null) {
            return; // aborted (and answered) while it waited for a slot: no HEADERS were written
        }
        stream = s;
        pumps = new StreamPumps(streamId, socket, context.publisherReads(), s, context.newQueue(), context.metrics(),
                context.responseHeadTimeout(), () -> state.get() == State.OPEN, this);
        // HEADERS are on the connection: only now is stream_opened sent (section 5).
        if (!state.compareAndSet(State.COMMITTED, State.OPEN)) {
            finishAbortedAfterCommit(s);
            return;
        }
        answered.set(true);
        context.opened(this);
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
            context.ended(this, true, () -> sendClosed(deferred));
            return;
        }
        pumps.run();
    }

    /**
     * Rows 4-10: the target checks and the dial, interruptible while they run.
     *
     * @return the connected publisher socket, or null when refused (answered) or aborted meanwhile
     */
    private Socket dial() {
        DialResult result;
        if (!startDialing()) {
            return null; // unsubscribed or revoked before the dial began: no publisher connect at all
        }
        try {
            result = context.dialer().dial(target);
        } catch (RuntimeException e) {
            LOG.warn("dial_failed").field("stream_id", streamId).cause(e).log();
            result = new DialResult.Refused(Code.INTERNAL_ERROR, "internal error");
        } finally {
            endDialing();
        }
        return switch (result) {
            case DialResult.Cancelled c -> {
                abortOpening(null);
                yield null;
            }
            case DialResult.Refused r -> {
                refuse(r.code(), r.reason());
                yield null;
            }
            case DialResult.Connected c -> c.socket();
        };
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
        closeSocket();
        closeQueue();
        Code refusal;
        answerLock.lock();
        try {
            refusal = refusalAfterHeaders;
            refusalAfterHeaders = null;
        } finally {
            answerLock.unlock();
        }
        context.ended(this, false, () -> {
            if (refusal != null) {
                context.refused(streamId, refusal, "target no longer advertised");
            }
        });
    }

    /**
     * The router unsubscribed: abort an opening stream or reset an open one, silently.
     */
    public void unsubscribe() {
        if (!abortOpening(null)) {
            close(null);
        }
    }

    /**
     * The target is no longer advertised (section 6, revocation).
     *
     * @return whether this revoked the stream (false: it was already closing for another reason)
     */
    public boolean revoke() {
        return abortOpening(Code.TARGET_NOT_ADVERTISED) || close(Code.TARGET_NOT_ADVERTISED);
    }

    /**
     * The session ended: everything closes with it, nothing is reported (section 4 item 7).
     */
    public void closeWithSession() {
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
        closeSocket();
        if (!committed) {
            // (a stream aborted once committed leaves the table with its answer from its opener, behind the reset)
            context.ended(this, false, () -> {
                if (refusal != null && answered.compareAndSet(false, true)) {
                    context.refused(streamId, refusal, "target no longer advertised");
                }
            });
        }
        return true;
    }

    /**
     * Enters the dial phase unless the stream was aborted already. Under the lock an abort takes to interrupt a
     * dial, so an abort either comes first (no dial at all) or finds the dial under way and interrupts it.
     */
    private boolean startDialing() {
        interruptLock.lock();
        try {
            if (state.get() != State.OPENING) {
                return false;
            }
            dialing = true;
            return true;
        } finally {
            interruptLock.unlock();
        }
    }

    /** Leaves the dial phase, clearing an interrupt that raced with the dial's end. */
    private void endDialing() {
        interruptLock.lock();
        try {
            dialing = false;
            Thread.interrupted();
        } finally {
            interruptLock.unlock();
        }
    }

    private void refuse(Code code, String reason) {
        if (!state.compareAndSet(State.OPENING, State.CLOSED)) {
            return;
        }
        context.ended(this, false, () -> {
            if (answered.compareAndSet(false, true)) {
                context.refused(streamId, code, reason);
            }
        });
    }

    /**
     * Ends an open stream once: resets the HTTP/2 stream, closes the socket, and reports
     * {@code stream_closed} with {@code code} unless it is null.
     */
    @Override
    public boolean close(Code code) {
        return close(code, true);
    }

    /**
     * Ends an open stream whose request body has ended (publisher EOF): as {@link #close(Code)}, but the HTTP/2
     * stream is left for the router to end, within the pumps' grace (section 6 and docs/protocol.md 8.1).
     */
    @Override
    public boolean closeEnded(Code code) {
        return close(code, false);
    }

    private boolean close(Code code, boolean reset) {
        if (!state.compareAndSet(State.OPEN, State.CLOSED)) {
            return false;
        }
        closeQueue();
        BusStream s = stream;
        if (s != null && reset) {
            s.cancel();
        }
        closeSocket();
        if (code != null) {
            LOG.info("stream_closed").field("stream_id", streamId).field("code", code.wire())
                    .field("bytes_to_router", bytesToRouter()).field("bytes_to_publisher", bytesToPublisher()).log();
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
        context.ended(this, true, () -> sendClosed(code));
        return true;
    }

    private void sendClosed(Code code) {
        if (code != null) {
            context.closed(streamId, code);
        }
    }

    private void closeQueue() {
        StreamPumps p = pumps;
        if (p != null) {
            p.queue().close();
        }
    }

    /** Closes the publisher socket and, once the readiness loop reads it, releases its registration there. */
    private void closeSocket() {
        Socket s = socket;
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }
        StreamPumps p = pumps;
        if (p != null) {
            p.socketClosed();
        }
    }
}
