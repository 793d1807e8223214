package io.continuum.broker.relay.session;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameDecoder;
import io.continuum.broker.protocol.SessionLimits;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.session.SessionLife.State;
import io.continuum.broker.relay.stream.DataStream;
import io.continuum.broker.relay.stream.StreamContext;
import io.continuum.broker.relay.stream.TargetDialer;
import io.continuum.broker.relay.transport.BusConnector;
import io.continuum.broker.relay.transport.BusEndpoint;
import io.continuum.broker.relay.transport.BusStream;

/**
 * One session attempt and, once welcomed, the session's whole life (bus-protocol-v1.md sections 2, 4 and 5).
 * {@link #run} blocks until the session ends and returns how it went. This class only wires the session's jobs,
 * each its own class:
 * <pre>
 *   Handshake      connect, hello, response head ({@link HeadCheck})
 *   FrameDispatch  the session stream's one reader: welcome, then router frames to their jobs, subscribe rows 1-3
 *   SessionStreams the table of data streams and the {@link StreamContext} they run in
 *   SessionTimers  heartbeat and idle timeout; the welcome deadline
 *   Drain          the router's drain (or its GOAWAY) and a local shutdown
 *   RevocationPasses  metadata changes to coalesced passes over the streams
 *   Teardown       streams and connection closed, metrics, session_ended
 *   SessionWriter  every write on the session stream; SessionLife the state and the one end
 * </pre>
 * Threads: the caller reads frames; the timer thread; one thread per drain; each data stream has its own (see
 * {@link DataStream}). The session's events all keep this class's logger name, as operators filter on it.
 */
public final class BusSession {
    private static final EventLog LOG = EventLog.of(BusSession.class);

    private final PublisherView view;
    private final RelayMetrics metrics;
    private final StreamRegistry registry;
    /** Measures how long the session stayed welcomed (section 4 item 4's 60 s); injectable for tests. */
    private final LongSupplier nanoClock;
    private final FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
    private final SessionLife life = new SessionLife();
    private final SessionHeaders headers;
    private final SessionStreams streams;
    private final SessionWriter writer;
    private final SessionTimers timers;
    private final Drain drain;
    private final FrameDispatch dispatch;
    private final Handshake handshake;
    private final Teardown teardown;

    private volatile SessionLimits limits;
    private volatile long welcomedAtNanos;
    private volatile boolean wasWelcomed;
    private volatile AutoCloseable viewListener;

    /**
     * Creates a session attempt.
     *
     * @param endpoint   the bus endpoint for this attempt (CA bundle freshly read)
     * @param credential the credential for this attempt (freshly read; never logged)
     * @param registry   where the broker keeps track of open streams for status and gauges
     */
    public BusSession(RelayConfig config, BusEndpoint endpoint, Credential credential, BusConnector connector,
                      PublisherView view, TargetDialer dialer, RelayMetrics metrics, StreamRegistry registry) {
        this(config, endpoint, credential, connector, view, dialer, metrics, registry, System::nanoTime);
    }

    /**
     * Creates a session attempt whose welcomed time is measured on {@code nanoClock} (the backoff reset).
     *
     * @param endpoint   the bus endpoint for this attempt (CA bundle freshly read)
     * @param credential the credential for this attempt (freshly read; never logged)
     * @param registry   where the broker keeps track of open streams for status and gauges
     * @param nanoClock  monotonic clock for how long the session stayed welcomed
     */
    public BusSession(RelayConfig config, BusEndpoint endpoint, Credential credential, BusConnector connector,
                      PublisherView view, TargetDialer dialer, RelayMetrics metrics, StreamRegistry registry,
                      LongSupplier nanoClock) {
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.view = view;
        this.metrics = metrics;
        this.registry = registry;
        this.headers = new SessionHeaders(credential, endpoint.userAgent());
        this.writer = new SessionWriter(life);
        this.streams = new SessionStreams(life, writer, headers, dialer, config.timeouts(), metrics, registry);
        this.timers = new SessionTimers(life, writer);
        this.drain = new Drain(config, life, writer, streams, registry.routerFrameLog());
        this.dispatch = new FrameDispatch(life, decoder, timers, streams, drain, metrics, registry.routerFrameLog(),
                this::welcomed);
        this.handshake = new Handshake(config, endpoint, connector, headers, life, writer, dispatch::connectionClosed,
                drain::byGoAway);
        this.teardown = new Teardown(life, streams, headers, metrics);
    }

    /**
     * Connects, says {@code hello}, waits for {@code welcome}, then serves the session until it ends.
     *
     * @return how the attempt went, for the reconnect loop
     */
    public SessionOutcome run() {
        SessionLife.End e;
        try {
            if (handshake.run() instanceof Handshake.Opened opened) {
                dispatch.serve(opened.stream(), opened.welcomeDeadline());
            }
        } catch (RuntimeException ex) {
            LOG.error("session_internal_error").cause(ex).log();
            life.end(AttemptResult.FAILED, EndReason.CONNECTION_LOST, "internal error: " + ex);
        } finally {
            e = teardown.run(viewListener, wasWelcomed, () -> registry.sessionEnded(this));
        }
        Duration welcomedFor = !wasWelcomed ? Duration.ZERO
                : Duration.ofNanos(nanoClock.getAsLong() - welcomedAtNanos);
        return new SessionOutcome(e.result(), e.reason(), welcomedFor,
                e.reason() == EndReason.DRAINED ? drain.routerDrain() : null, handshake.retryAfter(), e.detail(),
                drain.movedForStreamIds());
    }

    /**
     * On the reader, right after {@code welcome} was read: every job learns the negotiated limits; then the session
     * counts as connected and its clocks start. False when the attempt ended meanwhile (a shutdown).
     */
    private boolean welcomed(Frame.Welcome w, BusStream sessionStream) {
        SessionLimits l = SessionLimits.negotiate(w);
        limits = l;
        decoder.setMaxFrameBytes(l.maxFrameBytes());
        headers.welcomed(w.sessionId());
        streams.welcomed(l);
        dispatch.welcomed(l, sessionStream);
        timers.frameArrived();
        life.lock().lock(); // one step with a shutdown's look at the state (Drain.byShutdown)
        try {
            if (!life.advance(State.AWAITING_WELCOME, State.WELCOMED)) {
                return false;
            }
        } finally {
            life.lock().unlock();
        }
        welcomedAtNanos = nanoClock.getAsLong();
        wasWelcomed = true;
        metrics.sessionAttempt(AttemptResult.WELCOMED);
        metrics.busConnected(handshake.elapsed());
        registry.sessionWelcomed(this);
        LOG.info("session_welcomed").field("session_id", w.sessionId()).field("heartbeat_ms",
                l.heartbeatInterval().toMillis()).field("idle_timeout_ms", l.idleTimeout().toMillis())
                .field("max_streams", l.maxStreams()).field("max_stream_buffer_bytes", l.maxStreamBufferBytes())
                .field("max_frame_bytes", l.maxFrameBytes()).log();
        // The view's listeners must not block; revocation writes frames, so it runs on its own thread, and a burst
        // of changes makes at most one pass that waits.
        RevocationPasses revocations = new RevocationPasses(() -> streams.revokeUnadvertised(view));
        viewListener = view.onChange(revocations::ask);
        writer.limitWaiting(l.maxStreams());
        timers.start(l);
        drain.afterWelcome(); // a GOAWAY that came before welcome: the session drains at once
        life.connection().onStreamIdsRunningOut(drain::byStreamIdsRunningOut);
        return true;
    }

    /**
     * Local shutdown (SIGTERM/SIGINT, section 4 item 6): with a welcomed session, sends {@code draining}, refuses
     * new subscribes, lets open streams run until they close or {@code deadline} passes, then ends the session
     * ({@code shutdown}); a router drain under way becomes a shutdown, ending at the earlier deadline. Without a
     * welcomed session the attempt is abandoned at once, also in the middle of TCP, TLS or HTTP/2 set-up, and no
     * {@code hello} is sent after it. Returns without waiting for the session to end ({@link #run} returns when it
     * has).
     *
     * @param deadline how long open streams may still run
     */
    public void shutdown(Duration deadline) {
        if (!drain.byShutdown(deadline)) {
            handshake.abandon();
        }
    }

    /** Test seam: runs on the session's reader right after it accepted {@code welcome}. */
    void afterWelcomeRead(Runnable hook) {
        life.afterWelcomeRead = hook;
    }

    /** Ends the session at once, without draining (a second signal, or the broker closing). */
    public void abort() {
        life.end(life.resultSoFar(), EndReason.SHUTDOWN, "aborted");
    }

    /** Where the session is in {@link State}'s order, for the status page. */
    public State state() {
        return life.state();
    }

    /** The id {@code welcome} gave, or null before it. */
    public String sessionId() {
        return headers.sessionId();
    }

    /** The limits {@code welcome} negotiated, or null before it. */
    public SessionLimits negotiatedLimits() {
        return limits;
    }

    /** Data streams with {@code stream_opened} sent and not closed yet. */
    public int openStreamCount() {
        return streams.openCount();
    }

    /** Bytes queued toward the router across the session's streams, charged as R-BUF 3 charges them. */
    public long bufferedBytes() {
        return streams.bufferedBytes();
    }
}
