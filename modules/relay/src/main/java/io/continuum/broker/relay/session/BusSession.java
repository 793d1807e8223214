package io.continuum.broker.relay.session;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.event.Severity;
import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.protocol.BusProtocol;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.FrameDecoder;
import io.continuum.broker.protocol.ProtocolException;
import io.continuum.broker.protocol.SessionLimits;
import io.continuum.broker.relay.RelayConfig;
import io.continuum.broker.relay.RelayMetrics;
import io.continuum.broker.relay.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.transport.BusConnectException;
import io.continuum.broker.relay.transport.BusConnection;
import io.continuum.broker.relay.transport.BusConnector;
import io.continuum.broker.relay.transport.BusEndpoint;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.Header;
import io.continuum.broker.relay.transport.ResponseHead;
import io.continuum.broker.relay.transport.StreamRequest;
import io.continuum.broker.relay.transport.StreamResetException;
import io.continuum.broker.relay.transport.TransportException;

/**
 * One session attempt and, once welcomed, the session's whole life (bus-protocol-v1.md sections
 * 2, 4 and 5). {@link #run} blocks until the session ends and returns how it went.
 * <pre>
 *   CONNECTING -> AWAITING_WELCOME -> WELCOMED -> DRAINING -> ENDED
 *            \______________\______________\___________\____-> ENDED
 * </pre>
 * Threads: the caller reads frames; one timer thread watches the idle timeout and hands each heartbeat to a
 * short-lived writer (so a blocked write never hides an idle router); each data stream has its own (see {@link DataStream}). Frames to the router are
 * written under one lock so each is contiguous on the session stream.
 */
public final class BusSession {
    private static final EventLog LOG = EventLog.of(BusSession.class);

    /** Session states. */
    public enum State { CONNECTING, AWAITING_WELCOME, WELCOMED, DRAINING, ENDED }

    private final RelayConfig config;
    private final BusEndpoint endpoint;
    private final BusConnector connector;
    private final PublisherView view;
    private final TargetDialer dialer;
    private final RelayMetrics metrics;
    private final StreamRegistry registry;
    private final AtomicReference<State> state = new AtomicReference<>(State.CONNECTING);
    private final AtomicReference<End> end = new AtomicReference<>();
    private final Map<Long, DataStream> streams = new ConcurrentHashMap<>();
    private final AtomicInteger openStreams = new AtomicInteger();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final ReentrantLock stateLock = new ReentrantLock();
    private final Condition changed = stateLock.newCondition();
    private final SessionBudget budget;
    private final FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();

    private volatile BusConnection connection;
    private volatile BusStream sessionStream;
    private volatile String credential;
    private volatile String sessionId;
    private volatile SessionLimits limits;
    private volatile long lastFrameNanos;
    private volatile long welcomedAtNanos;
    private volatile Frame.Drain drain;
    private volatile Duration retryAfter;
    private volatile AutoCloseable viewListener;
    /** Set once a drain or shutdown has ended the request body: the router's close then completes it. */
    private volatile EndReason drainEnd;

    /** After END_STREAM on the session, how long the router gets to read what came before and close its side. */
    static final Duration DRAIN_LINGER = Duration.ofSeconds(2);

    private record End(AttemptResult result, EndReason reason, String detail) {
    }

    /**
     * Creates a session attempt.
     *
     * @param config    relay configuration
     * @param endpoint  the bus endpoint for this attempt (CA bundle freshly read)
     * @param credential the credential for this attempt (freshly read; never logged)
     * @param connector transport connector
     * @param view      metadata view
     * @param dialer    target checks and dialing
     * @param metrics   metrics sink
     * @param registry  where the broker keeps track of open streams for status and gauges
     */
    public BusSession(RelayConfig config, BusEndpoint endpoint, String credential, BusConnector connector,
                      PublisherView view, TargetDialer dialer, RelayMetrics metrics, StreamRegistry registry) {
        this.config = config;
        this.endpoint = endpoint;
        this.credential = credential;
        this.connector = connector;
        this.view = view;
        this.dialer = dialer;
        this.metrics = metrics;
        this.registry = registry;
        this.budget = new SessionBudget(config.timeouts().sessionBufferBytes());
    }

    /**
     * Connects, says {@code hello}, waits for {@code welcome}, then serves the session until it
     * ends.
     *
     * @return the outcome
     */
    public SessionOutcome run() {
        try {
            if (handshake()) {
                serve();
            }
        } catch (RuntimeException e) {
            LOG.error("session_internal_error").cause(e).log();
            endSession(AttemptResult.FAILED, EndReason.CONNECTION_LOST, "internal error: " + e);
        } finally {
            teardown();
        }
        End e = end.get();
        Duration welcomedFor = welcomedAtNanos == 0 ? Duration.ZERO
                : Duration.ofNanos(System.nanoTime() - welcomedAtNanos);
        return new SessionOutcome(e.result(), e.reason(), welcomedFor,
                e.reason() == EndReason.DRAINED ? drain : null, retryAfter, e.detail());
    }

    // ---------------------------------------------------------------- handshake (section 2)

    private boolean handshake() {
        long deadline = System.nanoTime() + config.busConnectTimeout().toNanos();
        try {
            connection = connector.connect(endpoint);
        } catch (BusConnectException e) {
            return endSession(AttemptResult.FAILED, EndReason.CONNECT_FAILED, e.getMessage());
        }
        connection.onClose(cause -> {
            if (state.get() == State.WELCOMED || state.get() == State.DRAINING) {
                endSession(AttemptResult.WELCOMED, EndReason.CONNECTION_LOST,
                        cause == null ? "connection closed" : cause.getMessage());
            }
        });
        setState(State.AWAITING_WELCOME);
        BusStream s;
        try {
            s = connection.open(new StreamRequest("POST", BusProtocol.SESSION_PATH, List.of(
                    Header.bearer(credential),
                    Header.of("content-type", BusProtocol.SESSION_CONTENT_TYPE),
                    Header.of("user-agent", userAgent()))), remaining(deadline));
            sessionStream = s;
            // hello goes out right behind the headers, never waiting for the response head.
            s.write(ByteBuffer.wrap(FrameCodec.encode(new Frame.Hello(List.of(BusProtocol.VERSION),
                    Frame.Hello.ROLE_BROKER, config.clientId(), config.kubernetesNamespace(),
                    config.dynamoNamespaces(), userAgent()))));
        } catch (TransportException e) {
            return endSession(AttemptResult.FAILED, EndReason.CONNECT_FAILED, e.getMessage());
        }
        ResponseHead head;
        try {
            head = s.awaitResponseHead(remaining(deadline));
        } catch (TimeoutException e) {
            return endSession(AttemptResult.FAILED, EndReason.CONNECT_FAILED,
                    "no response head within " + config.busConnectTimeout());
        } catch (TransportException e) {
            return endSession(AttemptResult.FAILED, EndReason.CONNECT_FAILED, e.getMessage());
        }
        if (head.status() != 200) {
            if (head.status() == 503) {
                retryAfter = head.header("retry-after").flatMap(BusSession::parseRetryAfter).orElse(null);
            }
            return endSession(AttemptResult.REFUSED, EndReason.REFUSED, "router answered HTTP " + head.status());
        }
        Optional<String> contentType = head.header("content-type");
        if (contentType.isEmpty() || !mediaType(contentType.get()).equals(BusProtocol.SESSION_CONTENT_TYPE)) {
            return endSession(AttemptResult.REFUSED, EndReason.PROTOCOL_ERROR,
                    "session response content-type is not " + BusProtocol.SESSION_CONTENT_TYPE);
        }
        // Frames until welcome, within bus_connect_timeout of sending hello.
        Watchdog handshakeWatchdog = Watchdog.start(deadline, () -> endSession(AttemptResult.FAILED,
                EndReason.CONNECT_FAILED, "no welcome within " + config.busConnectTimeout()));
        try {
            while (end.get() == null) {
                ByteBuffer chunk;
                try {
                    chunk = s.read();
                } catch (TransportException e) {
                    return endSession(AttemptResult.FAILED, EndReason.CONNECT_FAILED, e.getMessage());
                }
                if (chunk == null) {
                    return endSession(AttemptResult.FAILED, EndReason.CONNECT_FAILED,
                            "router ended the session stream before welcome");
                }
                int n = chunk.remaining();
                List<Frame.RouterFrame> frames = new ArrayList<>(2);
                ProtocolException malformed = null;
                try {
                    // The negotiated max_frame_bytes applies from the frame right behind welcome, even
                    // in the same chunk: the sink sets it before the decoder reads that frame's prefix.
                    decoder.decode(chunk, f -> {
                        frames.add(f);
                        if (f instanceof Frame.Welcome w && w.protocolVersion() == BusProtocol.VERSION) {
                            decoder.setMaxFrameBytes(SessionLimits.negotiate(w).maxFrameBytes());
                        }
                    });
                } catch (ProtocolException e) {
                    malformed = e;
                }
                if (malformed != null && frames.stream().noneMatch(Frame.Welcome.class::isInstance)) {
                    return endSession(AttemptResult.REFUSED, EndReason.PROTOCOL_ERROR, malformed.getMessage());
                }
                s.release(n);
                for (int i = 0; i < frames.size(); i++) {
                    Frame f = frames.get(i);
                    switch (f) {
                        case Frame.Unknown u -> metrics.ignoredFrame("unknown");
                        case Frame.ErrorFrame err -> {
                            return endSession(AttemptResult.REFUSED, EndReason.REFUSED,
                                    "router error before welcome: " + err.code().wire());
                        }
                        case Frame.Welcome w -> {
                            if (w.protocolVersion() != BusProtocol.VERSION) {
                                return endSession(AttemptResult.REFUSED, EndReason.PROTOCOL_ERROR,
                                        "welcome names version " + w.protocolVersion() + ", not offered");
                            }
                            if (!welcomed(w)) {
                                return false;
                            }
                            // Frames that came in the same chunk as welcome are served in order.
                            for (Frame rest : frames.subList(i + 1, frames.size())) {
                                if (end.get() != null) {
                                    return false;
                                }
                                dispatch(rest);
                            }
                            if (malformed != null) {
                                return endSession(AttemptResult.WELCOMED, EndReason.PROTOCOL_ERROR,
                                        malformed.getMessage());
                            }
                            return true;
                        }
                        default -> {
                            return endSession(AttemptResult.REFUSED, EndReason.PROTOCOL_ERROR,
                                    "'" + f.type() + "' before welcome");
                        }
                    }
                }
            }
            return false;
        } finally {
            handshakeWatchdog.cancel();
        }
    }

    private boolean welcomed(Frame.Welcome w) {
        limits = SessionLimits.negotiate(w);
        decoder.setMaxFrameBytes(limits.maxFrameBytes());
        sessionId = w.sessionId();
        lastFrameNanos = System.nanoTime();
        if (!state.compareAndSet(State.AWAITING_WELCOME, State.WELCOMED)) {
            return false;
        }
        welcomedAtNanos = System.nanoTime();
        signal();
        metrics.sessionAttempt(AttemptResult.WELCOMED);
        metrics.sessionConnected(true);
        registry.sessionWelcomed(this);
        LOG.info("session_welcomed").field("session_id", sessionId).field("heartbeat_ms",
                limits.heartbeatInterval().toMillis()).field("idle_timeout_ms", limits.idleTimeout().toMillis())
                .field("max_streams", limits.maxStreams()).field("max_stream_buffer_bytes", limits.maxStreamBufferBytes())
                .field("max_frame_bytes", limits.maxFrameBytes()).log();
        // The view's listeners must not block; revocation writes frames, so it runs on its own thread.
        viewListener = view.onChange(() -> Thread.ofVirtual().name("session-revocation").start(this::revokeUnadvertised));
        Thread.ofVirtual().name("session-timer").start(this::timerLoop);
        return true;
    }

    // ---------------------------------------------------------------- serving (sections 4 and 5)

    private void serve() {
        BusStream s = sessionStream;
        while (end.get() == null) {
            ByteBuffer chunk;
            try {
                chunk = s.read();
            } catch (TransportException e) {
                EndReason drained = drainEnd;
                if (drained != null) {
                    endSession(AttemptResult.WELCOMED, drained, drained == EndReason.SHUTDOWN ? "shutdown" : "drained");
                    return;
                }
                endAfterReadFailure(e);
                return;
            }
            if (chunk == null && drainEnd != null) {
                EndReason drained = drainEnd;
                endSession(AttemptResult.WELCOMED, drained, drained == EndReason.SHUTDOWN ? "shutdown" : "drained");
                return;
            }
            if (chunk == null) {
                endSession(AttemptResult.WELCOMED, EndReason.ROUTER_CLOSED, "router ended the session stream");
                return;
            }
            int n = chunk.remaining();
            List<Frame.RouterFrame> frames;
            try {
                frames = decoder.decode(chunk);
            } catch (ProtocolException e) {
                endSession(AttemptResult.WELCOMED, EndReason.PROTOCOL_ERROR, e.getMessage());
                return;
            }
            s.release(n);
            for (Frame f : frames) {
                if (end.get() != null) {
                    return;
                }
                dispatch(f);
            }
        }
    }

    private void endAfterReadFailure(TransportException failure) {
        // A reset session stream is the router closing it (section 4 item 3); anything else is the connection.
        EndReason reason = failure instanceof StreamResetException ? EndReason.ROUTER_CLOSED : EndReason.CONNECTION_LOST;
        endSession(AttemptResult.WELCOMED, reason, failure.getMessage());
    }

    private void dispatch(Frame frame) {
        lastFrameNanos = System.nanoTime();
        switch (frame) {
            case Frame.Heartbeat h -> {
                // liveness only
            }
            case Frame.Subscribe sub -> subscribe(sub);
            case Frame.Unsubscribe unsub -> {
                DataStream ds = streams.get(unsub.streamId());
                if (ds != null) {
                    ds.unsubscribe();
                }
            }
            case Frame.Drain d -> startDrain(d);
            case Frame.ErrorFrame err -> {
                if (err.terminal()) {
                    LOG.warn("router_error").field("terminal", true).field("code", err.code().wire()).log();
                    endSession(AttemptResult.WELCOMED, EndReason.TERMINAL_ERROR, "terminal error " + err.code().wire());
                } else {
                    metrics.ignoredFrame("error");
                    LOG.warn("router_error").field("terminal", false).field("code", err.code().wire()).log();
                }
            }
            case Frame.Unknown u -> {
                metrics.ignoredFrame("unknown");
                LOG.debug("unknown_frame").field("type", u.type()).log();
            }
            case Frame.Welcome w -> endSession(AttemptResult.WELCOMED, EndReason.PROTOCOL_ERROR, "second welcome");
            default -> endSession(AttemptResult.WELCOMED, EndReason.PROTOCOL_ERROR,
                    "'" + frame.type() + "' is not a router frame");
        }
    }

    /** Section 5: session-level checks 1-3 here, in the reader; rows 4-11 on the stream's thread. */
    private void subscribe(Frame.Subscribe sub) {
        long id = sub.streamId();
        State st = state.get();
        if (st == State.DRAINING) {
            refused(id, Code.DRAINING, "broker is draining");
            return;
        }
        if (streams.containsKey(id)) {
            refused(id, Code.DUPLICATE_STREAM, "stream id already open or opening");
            return;
        }
        if (streams.size() >= limits.maxStreams()) {
            refused(id, Code.TOO_MANY_STREAMS, "max_streams " + limits.maxStreams() + " reached");
            return;
        }
        DataStream ds = new DataStream(this, id, sub.target());
        streams.put(id, ds);
        ds.start();
    }

    /** Section 6, revocation: re-check every stream after a committed metadata change. */
    private void revokeUnadvertised() {
        for (DataStream ds : streams.values()) {
            PublisherKey key = ds.key();
            // a stream already closing (publisher gone, unsubscribed) stays in the map for a moment: not logged
            if (key != null && view.check(key) == Advertisement.NOT_ADVERTISED && ds.revoke()) {
                LOG.info("stream_revoked").field("stream_id", ds.streamId()).log();
            }
        }
    }

    // ---------------------------------------------------------------- drain and shutdown (section 4 items 5-7)

    private void startDrain(Frame.Drain d) {
        if (!state.compareAndSet(State.WELCOMED, State.DRAINING)) {
            return;
        }
        drain = d;
        Duration deadline = d.deadlineMs().isPresent() ? Duration.ofMillis(d.deadlineMs().getAsLong())
                : config.drainDeadline();
        LOG.info("drain").field("reason", clip(d.reason())).field("deadline_ms", deadline.toMillis())
                .field("open_streams", streams.size()).log();
        signal();
        Thread.ofVirtual().name("session-drain").start(() -> finishDrain(deadline, EndReason.DRAINED));
    }

    /**
     * Local shutdown (SIGTERM/SIGINT): sends {@code draining}, refuses new subscribes, lets open
     * streams run until they close or {@code deadline} passes, then ends the session
     * ({@code shutdown}). Returns at once when the session is not welcomed.
     *
     * @param deadline how long open streams may still run
     */
    public void shutdown(Duration deadline) {
        State st = state.get();
        if (st == State.WELCOMED && state.compareAndSet(State.WELCOMED, State.DRAINING)) {
            send(new Frame.Draining(deadline.toMillis()));
            signal();
            finishDrain(deadline, EndReason.SHUTDOWN);
        } else if (st == State.DRAINING) {
            // A router drain is under way; the local shutdown ends the session as shutdown at its deadline.
            finishDrain(deadline, EndReason.SHUTDOWN);
        } else {
            endSession(st == State.CONNECTING || st == State.AWAITING_WELCOME ? AttemptResult.FAILED
                    : AttemptResult.WELCOMED, EndReason.SHUTDOWN, "shutdown");
        }
    }

    /**
     * Ends the session at once, without draining (a second signal, or the broker closing).
     */
    public void abort() {
        State st = state.get();
        endSession(st == State.WELCOMED || st == State.DRAINING ? AttemptResult.WELCOMED : AttemptResult.FAILED,
                EndReason.SHUTDOWN, "aborted");
    }

    private void finishDrain(Duration deadline, EndReason reason) {
        awaitUntil(() -> streams.isEmpty() || end.get() != null, deadline);
        if (end.get() != null) {
            return;
        }
        drainEnd = reason;
        try {
            sessionStream.endRequest();
        } catch (TransportException e) {
            LOG.debug("end_request_failed").cause(e).log();
        }
        // Closing a TCP connection with unread bytes in flight can reset it and lose what the router
        // has not read yet (the last stream_closed frames, END_STREAM): give the router a moment to
        // read them and end its side, which ends the session (as drained/shutdown) by itself.
        awaitUntil(() -> end.get() != null, DRAIN_LINGER);
        endSession(AttemptResult.WELCOMED, reason, reason == EndReason.SHUTDOWN ? "shutdown" : "drained");
    }

    /** Waits until {@code done} holds (re-checked on every state change) or {@code timeout} passes. */
    private void awaitUntil(java.util.function.BooleanSupplier done, Duration timeout) {
        long until = System.nanoTime() + saturatedNanos(timeout);
        stateLock.lock();
        try {
            while (!done.getAsBoolean()) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                changed.awaitNanos(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            stateLock.unlock();
        }
    }

    /** The longest wait: a router's {@code deadline_ms} or idle timeout may be up to 2^53-1 ms, beyond what a long of nanoseconds holds. */
    private static final long LONGEST_WAIT_NANOS = Long.MAX_VALUE / 4;

    private static long saturatedNanos(Duration d) {
        return d.compareTo(Duration.ofNanos(LONGEST_WAIT_NANOS)) >= 0 ? LONGEST_WAIT_NANOS : d.toNanos();
    }

    // ---------------------------------------------------------------- timer: heartbeat and idle (section 4 items 1-2)

    private final java.util.concurrent.atomic.AtomicBoolean heartbeatInFlight =
            new java.util.concurrent.atomic.AtomicBoolean();

    private void timerLoop() {
        SessionLimits l = limits;
        long heartbeat = l.heartbeatInterval().toNanos();
        long idle = saturatedNanos(l.idleTimeout()); // no upper clamp in section 3.2: up to 2^53-1 ms
        long nextHeartbeat = System.nanoTime() + heartbeat;
        stateLock.lock();
        try {
            while (end.get() == null) {
                long now = System.nanoTime();
                long idleAt = lastFrameNanos + idle;
                if (now - idleAt >= 0) {
                    stateLock.unlock();
                    try {
                        endSession(AttemptResult.WELCOMED, EndReason.IDLE_TIMEOUT,
                                "no frame from the router for " + l.idleTimeout().toMillis() + " ms");
                    } finally {
                        stateLock.lock();
                    }
                    return;
                }
                if (now - nextHeartbeat >= 0) {
                    // Written by its own thread: a router that stops reading the session stream blocks the
                    // write once its window is spent, and that must not stop this loop from seeing it go idle.
                    if (heartbeatInFlight.compareAndSet(false, true)) {
                        Thread.ofVirtual().name("session-heartbeat").start(() -> {
                            try {
                                send(Frame.Heartbeat.INSTANCE);
                            } finally {
                                heartbeatInFlight.set(false);
                            }
                        });
                    }
                    nextHeartbeat = now + heartbeat;
                    continue;
                }
                long wait = Math.min(nextHeartbeat - now, idleAt - now);
                changed.awaitNanos(Math.max(wait, TimeUnit.MILLISECONDS.toNanos(1)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            stateLock.unlock();
        }
    }

    // ---------------------------------------------------------------- ending

    /**
     * Ends the session once; the first caller decides the reason. Closes the connection, which
     * ends every data stream with it (no {@code stream_closed} is sent for them).
     *
     * @return always false, for {@code return endSession(...)} in the handshake
     */
    boolean endSession(AttemptResult result, EndReason reason, String detail) {
        if (!end.compareAndSet(null, new End(result, reason, detail))) {
            return false;
        }
        state.set(State.ENDED);
        signal();
        BusConnection c = connection;
        if (c != null) {
            c.close();
        }
        return false;
    }

    private void teardown() {
        End e = end.get();
        if (e == null) {
            endSession(AttemptResult.FAILED, EndReason.CONNECTION_LOST, "session ended");
            e = end.get();
        }
        AutoCloseable l = viewListener;
        if (l != null) {
            try {
                l.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
        for (DataStream ds : new ArrayList<>(streams.values())) {
            ds.closeWithSession();
        }
        BusConnection c = connection;
        if (c != null) {
            c.close();
        }
        if (e.result() != AttemptResult.WELCOMED) {
            metrics.sessionAttempt(e.result());
        } else {
            metrics.sessionConnected(false);
        }
        metrics.sessionEnded(e.reason());
        registry.sessionEnded(this);
        End fin = e;
        Severity level = switch (fin.reason()) {
            case SHUTDOWN, DRAINED -> Severity.INFO;
            default -> Severity.WARN;
        };
        LOG.at(level, "session_ended").field("result", fin.result().label()).field("reason", fin.reason().wire())
                .field("session_id", sessionId).field("detail", clip(fin.detail())).log();
        credential = null;
    }

    // ---------------------------------------------------------------- for DataStream

    void send(Frame.ClientFrame frame) {
        BusStream s = sessionStream;
        if (s == null || end.get() != null) {
            return;
        }
        byte[] bytes = FrameCodec.encode(frame);
        writeLock.lock();
        try {
            s.write(ByteBuffer.wrap(bytes));
        } catch (TransportException e) {
            LOG.debug("frame_write_failed").field("type", frame.type()).cause(e).log();
        } finally {
            writeLock.unlock();
        }
    }

    void refused(long streamId, Code code, String reason) {
        // Counted before the frame leaves, so a router that reads the answer sees the count too.
        metrics.subscribeRefused(code);
        registry.refused(streamId, code, reason);
        send(new Frame.StreamRefused(streamId, code, reason));
    }

    void streamOpened(DataStream ds) {
        openStreams.incrementAndGet();
        metrics.subscribeOpened();
        registry.streamOpened(ds);
    }

    void streamEnded(DataStream ds, boolean wasOpen) {
        if (streams.remove(ds.streamId(), ds)) {
            if (wasOpen) {
                openStreams.decrementAndGet();
                registry.streamEnded(ds);
            }
            signal();
        }
    }

    TargetDialer dialer() {
        return dialer;
    }

    BusConnection connection() {
        return connection;
    }

    RelayConfig.Timeouts timeouts() {
        return config.timeouts();
    }

    SessionLimits limits() {
        return limits;
    }

    SessionBudget budget() {
        return budget;
    }

    RelayMetrics metrics() {
        return metrics;
    }

    String credential() {
        String c = credential;
        return c == null ? "" : c;
    }

    String userAgent() {
        return endpoint.userAgent();
    }

    // ---------------------------------------------------------------- status

    /**
     * Current state.
     *
     * @return state
     */
    public State state() {
        return state.get();
    }

    /**
     * Session id from {@code welcome}, or null before it.
     *
     * @return session id
     */
    public String sessionId() {
        return sessionId;
    }

    /**
     * Negotiated limits, or null before {@code welcome}.
     *
     * @return limits
     */
    public SessionLimits negotiatedLimits() {
        return limits;
    }

    /**
     * Open data streams ({@code stream_opened} sent, not closed yet).
     *
     * @return count
     */
    public int openStreamCount() {
        return openStreams.get();
    }

    /**
     * Bytes queued toward the router across the session's streams, overhead included.
     *
     * @return bytes
     */
    public long bufferedBytes() {
        return budget.usedBytes();
    }

    // ---------------------------------------------------------------- helpers

    private void setState(State s) {
        state.set(s);
        signal();
    }

    private void signal() {
        stateLock.lock();
        try {
            changed.signalAll();
        } finally {
            stateLock.unlock();
        }
    }

    private static Duration remaining(long deadlineNanos) {
        return Duration.ofNanos(Math.max(1, deadlineNanos - System.nanoTime()));
    }

    private static String mediaType(String contentType) {
        int semi = contentType.indexOf(';');
        return (semi < 0 ? contentType : contentType.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
    }

    static Optional<Duration> parseRetryAfter(String value) {
        try {
            long seconds = Long.parseLong(value.trim());
            return seconds >= 0 ? Optional.of(Duration.ofSeconds(seconds)) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    static String clip(String s) {
        if (s == null) {
            return "";
        }
        return s.length() > 200 ? s.substring(0, 200) : s;
    }

    /**
     * A one-shot deadline on a virtual thread.
     */
    private static final class Watchdog {
        private final Thread thread;

        private Watchdog(Thread thread) {
            this.thread = thread;
        }

        static Watchdog start(long deadlineNanos, Runnable onExpiry) {
            return new Watchdog(Thread.ofVirtual().name("session-handshake-deadline").start(() -> {
                try {
                    long left = deadlineNanos - System.nanoTime();
                    if (left > 0) {
                        TimeUnit.NANOSECONDS.sleep(left);
                    }
                    onExpiry.run();
                } catch (InterruptedException ignored) {
                    // cancelled
                }
            }));
        }

        void cancel() {
            thread.interrupt();
        }
    }
}
