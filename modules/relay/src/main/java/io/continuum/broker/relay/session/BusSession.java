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
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
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
    /** Streams out of the table whose answer is not written yet: a drain that finds no stream waits for them. */
    private final AtomicInteger answersInFlight = new AtomicInteger();
    private final AtomicInteger openStreams = new AtomicInteger();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final ReentrantLock stateLock = new ReentrantLock();
    private final Condition changed = stateLock.newCondition();
    private final SessionBudget budget;
    private final FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();

    private volatile BusConnection connection;
    private volatile BusStream sessionStream;
    private volatile Credential credential;
    private volatile String sessionId;
    private volatile SessionLimits limits;
    private volatile long lastFrameNanos;
    private volatile long welcomedAtNanos;
    private volatile long handshakeStartedNanos;
    private volatile boolean wasWelcomed;
    /** Measures how long the session stayed welcomed (section 4 item 4's 60 s); injectable for tests. */
    private final java.util.function.LongSupplier nanoClock;
    private volatile Frame.Drain drain;
    private volatile Duration retryAfter;
    private volatile AutoCloseable viewListener;
    /**
     * Why a drain under way will end the session: {@code drained} for the router's {@code drain},
     * {@code shutdown} once a local shutdown joined or started it (a shutdown always wins). Guarded by
     * {@link #stateLock} for writes, together with {@link #drainUntilNanos}.
     */
    private volatile EndReason drainReason;
    /** When the drain under way ends at the latest: the earlier of the router's and the shutdown's deadline. */
    private volatile long drainUntilNanos;
    /** Set once a drain or shutdown has ended the request body: the router's close then completes it. */
    private volatile boolean drainEnded;
    /** The thread inside {@link BusConnector#connect} while the attempt connects, for a shutdown to interrupt. */
    private Thread connectingThread;

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
    public BusSession(RelayConfig config, BusEndpoint endpoint, Credential credential, BusConnector connector,
                      PublisherView view, TargetDialer dialer, RelayMetrics metrics, StreamRegistry registry) {
        this(config, endpoint, credential, connector, view, dialer, metrics, registry, System::nanoTime);
    }

    /**
     * Creates a session attempt whose welcomed time is measured on {@code nanoClock}.
     *
     * @param config     relay configuration
     * @param endpoint   the bus endpoint for this attempt (CA bundle freshly read)
     * @param credential the credential for this attempt (freshly read; never logged)
     * @param connector  transport connector
     * @param view       metadata view
     * @param dialer     target checks and dialing
     * @param metrics    metrics sink
     * @param registry   where the broker keeps track of open streams for status and gauges
     * @param nanoClock  monotonic clock for how long the session stayed welcomed (the backoff reset)
     */
    public BusSession(RelayConfig config, BusEndpoint endpoint, Credential credential, BusConnector connector,
                      PublisherView view, TargetDialer dialer, RelayMetrics metrics, StreamRegistry registry,
                      java.util.function.LongSupplier nanoClock) {
        this.nanoClock = java.util.Objects.requireNonNull(nanoClock, "nanoClock");
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
        Duration welcomedFor = !wasWelcomed ? Duration.ZERO
                : Duration.ofNanos(nanoClock.getAsLong() - welcomedAtNanos);
        return new SessionOutcome(e.result(), e.reason(), welcomedFor,
                e.reason() == EndReason.DRAINED ? drain : null, retryAfter, e.detail());
    }

    // ---------------------------------------------------------------- handshake (section 2)

    private boolean handshake() {
        // Section 2: bus_connect_timeout bounds TCP, TLS and HTTP/2 set-up up to sending hello; the response
        // head and welcome then get their own bus_connect_timeout, counted from hello.
        handshakeStartedNanos = System.nanoTime(); // for the connect-to-welcome histogram, not a deadline
        long connectDeadline = handshakeStartedNanos + config.busConnectTimeout().toNanos();
        BusConnection c;
        try {
            c = connectUnlessEnded();
        } catch (BusConnectException e) {
            return endSession(AttemptResult.FAILED, EndReason.CONNECT_FAILED, e.getMessage());
        }
        if (c == null) {
            return false;
        }
        connection = c;
        if (end.get() != null) {
            // A shutdown came while connecting and saw no connection to close: nothing more is sent.
            c.close();
            return false;
        }
        connection.onClose(cause -> {
            State st = state.get();
            if (st == State.WELCOMED || st == State.DRAINING) {
                EndReason drained = drainEnded ? drainReason : null;
                if (drained != null) {
                    // The router closed the connection after the broker's END_STREAM: the drain is complete,
                    // whichever of this listener and the session's reader notices first.
                    endDrained(drained);
                } else {
                    endSession(AttemptResult.WELCOMED, EndReason.CONNECTION_LOST,
                            cause == null ? "connection closed" : cause.getMessage());
                }
            }
        });
        setState(State.AWAITING_WELCOME);
        BusStream s;
        long welcomeDeadline;
        writeLock.lock();
        try {
            s = connection.open(new StreamRequest("POST", BusProtocol.SESSION_PATH, List.of(
                    Header.bearer(credential()),
                    Header.of("content-type", BusProtocol.SESSION_CONTENT_TYPE),
                    Header.of("user-agent", userAgent()))), remaining(connectDeadline));
            sessionStream = s;
            if (end.get() != null) {
                // Section 4 item 6: no hello after a shutdown; the attempt is abandoned.
                return false;
            }
            // hello goes out right behind the headers, never waiting for the response head.
            s.write(ByteBuffer.wrap(FrameCodec.encode(new Frame.Hello(List.of(BusProtocol.VERSION),
                    Frame.Hello.ROLE_BROKER, config.clientId(), config.kubernetesNamespace(),
                    config.dynamoNamespaces(), userAgent()))));
            welcomeDeadline = System.nanoTime() + config.busConnectTimeout().toNanos();
        } catch (TransportException e) {
            return endSession(AttemptResult.FAILED, EndReason.CONNECT_FAILED, e.getMessage());
        } finally {
            writeLock.unlock();
        }
        ResponseHead head;
        try {
            head = s.awaitResponseHead(remaining(welcomeDeadline));
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
        Watchdog handshakeWatchdog = Watchdog.start(welcomeDeadline, () -> endSession(AttemptResult.FAILED,
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
                s.release(n);
                for (int i = 0; i < frames.size(); i++) {
                    Frame f = frames.get(i);
                    switch (f) {
                        case Frame.Unknown u -> metrics.ignoredFrame("unknown");
                        case Frame.ErrorFrame err -> {
                            metrics.routerError(err.code(), err.terminal());
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
                // Section 2 decides by the first frame that is not ignored, in order: what the router sent
                // before a malformed frame (an error, a welcome) decides first; a malformed frame decides only
                // when nothing before it did.
                if (malformed != null) {
                    return endSession(AttemptResult.REFUSED, EndReason.PROTOCOL_ERROR, malformed.getMessage());
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
        welcomedAtNanos = nanoClock.getAsLong();
        wasWelcomed = true;
        signal();
        metrics.sessionAttempt(AttemptResult.WELCOMED);
        metrics.busConnected(Duration.ofNanos(System.nanoTime() - handshakeStartedNanos));
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
                if (drainEnded) {
                    endDrained(drainReason);
                    return;
                }
                endAfterReadFailure(e);
                return;
            }
            if (chunk == null && drainEnded) {
                endDrained(drainReason);
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
                metrics.routerError(err.code(), err.terminal());
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
        Duration deadline = d.deadlineMs().isPresent() ? Duration.ofMillis(d.deadlineMs().getAsLong())
                : config.drainDeadline();
        long until = System.nanoTime() + saturatedNanos(deadline);
        boolean started;
        stateLock.lock();
        try {
            started = state.compareAndSet(State.WELCOMED, State.DRAINING);
            if (!started && state.get() != State.DRAINING) {
                return;
            }
            drain = d;
            if (started) {
                drainReason = EndReason.DRAINED;
                drainUntilNanos = until;
            } else if (until - drainUntilNanos < 0) {
                // A drain (or shutdown) is already under way: the earlier deadline holds, the reason stays.
                drainUntilNanos = until;
            }
            changed.signalAll();
        } finally {
            stateLock.unlock();
        }
        LOG.info("drain").field("reason", clip(d.reason())).field("deadline_ms", deadline.toMillis())
                .field("open_streams", streams.size()).log();
        if (started) {
            Thread.ofVirtual().name("session-drain").start(this::finishDrain);
        }
    }

    /**
     * Local shutdown (SIGTERM/SIGINT, section 4 item 6): with a welcomed session, sends
     * {@code draining}, refuses new subscribes, lets open streams run until they close or
     * {@code deadline} passes, then ends the session ({@code shutdown}). A router drain already under way
     * becomes a shutdown: {@code draining} is still sent (unless the request body has already ended),
     * the session ends at the earlier of the two deadlines, and the end counts as {@code shutdown}.
     * Without a welcomed session the attempt is abandoned at once, also in the middle of TCP, TLS or
     * HTTP/2 set-up, and no {@code hello} is sent after it. Returns without waiting for the session
     * to end ({@link #run} returns when it has).
     *
     * @param deadline how long open streams may still run
     */
    public void shutdown(Duration deadline) {
        long until = System.nanoTime() + saturatedNanos(deadline);
        boolean startFinisher;
        boolean sendDraining;
        stateLock.lock();
        try {
            if (end.get() != null || drainReason == EndReason.SHUTDOWN) {
                return;
            }
            State st = state.get();
            if (st == State.WELCOMED && state.compareAndSet(State.WELCOMED, State.DRAINING)) {
                startFinisher = true;
                drainUntilNanos = until;
            } else if (st == State.DRAINING) {
                startFinisher = false;
                if (until - drainUntilNanos < 0) {
                    drainUntilNanos = until;
                }
            } else {
                startFinisher = false;
                st = null;
            }
            if (st != null) {
                drainReason = EndReason.SHUTDOWN;
                changed.signalAll();
            }
            sendDraining = st != null;
        } finally {
            stateLock.unlock();
        }
        if (!sendDraining) {
            abandonAttempt();
            return;
        }
        LOG.info("shutdown_drain").field("deadline_ms", deadline.toMillis()).field("open_streams", streams.size()).log();
        writeLock.lock();
        try {
            // Never after the request body ended (END_STREAM): the router already knows the session is ending.
            if (!drainEnded) {
                send(new Frame.Draining(deadline.toMillis()));
            }
        } finally {
            writeLock.unlock();
        }
        if (startFinisher) {
            Thread.ofVirtual().name("session-shutdown").start(this::finishDrain);
        }
    }

    /** Shutdown before welcome: ends the attempt as {@code shutdown} and stops a connect in progress. */
    private void abandonAttempt() {
        State st = state.get();
        endSession(st == State.CONNECTING || st == State.AWAITING_WELCOME ? AttemptResult.FAILED
                : AttemptResult.WELCOMED, EndReason.SHUTDOWN, "shutdown");
        stateLock.lock();
        try {
            Thread t = connectingThread;
            if (t != null) {
                // The connector honours an interrupt: it closes the socket (ending a TLS handshake the
                // router never answers) and returns at once, instead of holding the exit for bus_connect_timeout.
                t.interrupt();
            }
        } finally {
            stateLock.unlock();
        }
    }

    /** Connects unless the attempt already ended; a shutdown during the connect interrupts it (null then). */
    private BusConnection connectUnlessEnded() throws BusConnectException {
        stateLock.lock();
        try {
            if (end.get() != null) {
                return null;
            }
            connectingThread = Thread.currentThread();
        } finally {
            stateLock.unlock();
        }
        try {
            return connector.connect(endpoint);
        } catch (BusConnectException e) {
            if (end.get() != null) {
                return null;
            }
            throw e;
        } finally {
            stateLock.lock();
            try {
                connectingThread = null;
                if (end.get() != null) {
                    Thread.interrupted(); // the interrupt was meant for the connect only
                }
            } finally {
                stateLock.unlock();
            }
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

    /**
     * The one drain finisher of a session, for a router drain or a local shutdown alike: waits until all
     * streams closed and their answers are written, or the drain's deadline passes (re-read on every change, since a shutdown may bring
     * it forward), ends the request body, gives the router {@link #DRAIN_LINGER} to close its side, then
     * ends the session with the drain's reason as it is at that moment.
     */
    private void finishDrain() {
        stateLock.lock();
        try {
            while (end.get() == null && !(streams.isEmpty() && answersInFlight.get() == 0)) {
                long left = drainUntilNanos - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                changed.awaitNanos(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            stateLock.unlock();
        }
        if (end.get() != null) {
            return;
        }
        boolean locked = false;
        try {
            // Under the write lock, so a shutdown's draining frame goes before END_STREAM or not at all; a
            // write stalled by a router that stopped reading must not hold the drain, hence the bound.
            locked = writeLock.tryLock(DRAIN_LINGER.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            drainEnded = true;
            if (locked) {
                sessionStream.endRequest();
            }
        } catch (TransportException e) {
            LOG.debug("end_request_failed").cause(e).log();
        } finally {
            if (locked) {
                writeLock.unlock();
            }
        }
        // Closing a TCP connection with unread bytes in flight can reset it and lose what the router
        // has not read yet (the last stream_closed frames, END_STREAM): give the router a moment to
        // read them and end its side, which ends the session (as drained/shutdown) by itself.
        if (locked) {
            awaitUntil(() -> end.get() != null, DRAIN_LINGER);
        }
        endDrained(drainReason);
    }

    private void endDrained(EndReason reason) {
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
        // By what happened, not by the end's label: a shutdown racing a welcome may label a welcomed session's
        // end as a failed attempt, and that attempt was already counted (welcomed) and marked connected.
        if (!wasWelcomed) {
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
        metrics.subscribeOpened(ds.age()); // the stream's age is the time since its subscribe arrived
        registry.streamOpened(ds);
    }

    /**
     * A stream ends with an answer: out of the table first (a router may reuse the id, or the max_streams place,
     * as soon as it reads the answer), then the answer, and only then may a drain find the session empty and end
     * it (which would drop the answer).
     */
    void streamEnded(DataStream ds, boolean wasOpen, Runnable answer) {
        answersInFlight.incrementAndGet();
        try {
            streamEnded(ds, wasOpen);
            answer.run();
        } finally {
            answersInFlight.decrementAndGet();
            signal();
        }
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
        Credential c = credential;
        return c == null ? "" : c.reveal();
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
