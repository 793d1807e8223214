package io.continuum.broker.relay.loop;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.api.RelayStatus;
import io.continuum.broker.relay.api.SessionState;
import io.continuum.broker.relay.session.BusSession;
import io.continuum.broker.relay.session.SessionLife;
import io.continuum.broker.relay.session.SessionOutcome;
import io.continuum.broker.relay.session.StreamRegistry;
import io.continuum.broker.relay.stream.TargetDialer;
import io.continuum.broker.relay.transport.BusConnector;
import io.continuum.broker.relay.transport.BusEndpoint;
import io.continuum.broker.relay.transport.TlsTrust;

/**
 * The broker's life as a bus client (R-BEH 1, 6-8; bus-protocol-v1.md section 4): wait for the
 * metadata view's initial sync, then run sessions one after another, with jittered exponential
 * backoff, the rebalance fast path, and a graceful shutdown.
 * <pre>
 *   SYNCING -> CONNECTING -> (session: CONNECTED, DRAINING) -> BACKOFF -> CONNECTING ...
 *                      any state --shutdown--> IDLE
 * </pre>
 * The loop's own states and the ones its session adds are one enum, {@link SessionState}, the one {@code /statusz}
 * shows. {@link SessionLife.State} stays apart: it is one attempt's machine, whose transitions (awaiting welcome,
 * ended) guard the frames of that attempt and mean nothing once the loop moved on.
 */
public final class SessionLoop {
    private static final EventLog LOG = EventLog.of(SessionLoop.class);
    private static final int RECENT_ENDS = 16;

    private final RelayConfig config;
    private final PublisherView view;
    private final BusConnector connector;
    private final TargetDialer dialer;
    private final RelayMetrics metrics;
    private final StreamRegistry registry;
    private final FlooredJitterBackoff backoff;
    private final RebalanceThrottle rebalance;
    private final LongSupplier nanoClock;
    private final String userAgent;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<RelayStatus.SessionEnd> recentEnds = new ArrayDeque<>();
    private final CompletableFuture<Throwable> died = new CompletableFuture<>();
    private volatile SessionState state = SessionState.SYNCING;
    private volatile BusSession session;
    private volatile boolean stopping;
    private volatile Duration shutdownDeadline;
    private volatile Instant nextAttemptAt;
    private volatile Thread thread;
    private long attempts;

    /**
     * Creates the loop.
     *
     * @param config    relay configuration
     * @param view      metadata view
     * @param connector bus transport
     * @param dialer    target checks and dialing
     * @param metrics   metrics sink
     * @param registry  status registry
     * @param random    jitter source
     * @param nanoClock monotonic clock for the rebalance window and how long a session stayed welcomed
     * @param userAgent {@code continuum-event-broker/<version>}
     */
    public SessionLoop(RelayConfig config, PublisherView view, BusConnector connector, TargetDialer dialer,
                       RelayMetrics metrics, StreamRegistry registry, RandomGenerator random, LongSupplier nanoClock,
                       String userAgent) {
        this.config = config;
        this.view = view;
        this.connector = connector;
        this.dialer = dialer;
        this.metrics = metrics;
        this.registry = registry;
        this.backoff = new FlooredJitterBackoff(config.reconnectBackoff(), random);
        this.rebalance = new RebalanceThrottle(nanoClock, random);
        this.nanoClock = nanoClock;
        this.userAgent = userAgent;
    }

    /**
     * Starts the loop on its own thread.
     */
    public void start() {
        lock.lock();
        try {
            if (thread != null) {
                throw new IllegalStateException("already started");
            }
            thread = Thread.ofVirtual().name("session-loop").start(this::run);
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        Throwable failure = null;
        try {
            if (!awaitSync()) {
                return;
            }
            while (!stopping) {
                if (attempts++ > 0) {
                    metrics.reconnect();
                }
                setState(SessionState.CONNECTING);
                SessionOutcome outcome = attempt();
                remember(outcome);
                if (stopping) {
                    return;
                }
                Duration delay = nextDelay(outcome);
                nextAttemptAt = Instant.now().plus(delay);
                setState(SessionState.BACKOFF);
                LOG.info("reconnect_scheduled").field("delay_ms", delay.toMillis()).field("after", outcome.reason().wire()).log();
                if (!await(delay)) {
                    return;
                }
                nextAttemptAt = null;
            }
        } catch (RuntimeException | Error e) {
            // Outages (the router, the credential, the API server) never come here: every attempt's failure is an
            // outcome, retried above. What does is a bug or the JVM running out of something: the loop cannot go
            // on, and a process that stays up without it only looks healthy (issue 56). Whoever owns the process
            // learns it from died() and exits, so its supervisor restarts it.
            failure = e;
            LOG.error("session_loop_failed").cause(e).log();
        } finally {
            setState(SessionState.IDLE);
            if (failure != null) {
                died.complete(failure);
            }
        }
    }

    /**
     * Completes with the error that ended the loop, once it ended by one: a bug or an {@link Error}, never an
     * outage (those are retried). Never completes while the loop runs, nor after a shutdown or an abort.
     *
     * @return the loop's death, if it comes
     */
    public CompletionStage<Throwable> died() {
        return died.minimalCompletionStage();
    }

    private SessionOutcome attempt() {
        BusEndpoint endpoint;
        Credential credential;
        try {
            TlsTrust trust = config.caCertificates() == null ? TlsTrust.systemRoots()
                    : TlsTrust.certificates(config.caCertificates().call());
            endpoint = new BusEndpoint(config.busUrl(), trust,
                    config.tlsServerName(), config.busConnectTimeout(), userAgent);
            credential = config.credential().call();
        } catch (Exception e) {
            // Never the exception text of a credential reader: it is ours and names only the source.
            String detail = "cannot read the CA bundle or credential: " + e.getClass().getSimpleName();
            LOG.error("session_attempt_failed").field("reason", "connect_failed").field("detail", detail)
                    .field("message", SessionLife.clip(e.getMessage())).log();
            metrics.sessionAttempt(AttemptResult.FAILED);
            metrics.sessionEnded(EndReason.CONNECT_FAILED);
            return new SessionOutcome(AttemptResult.FAILED, EndReason.CONNECT_FAILED, Duration.ZERO, null, null, detail);
        }
        BusSession s = new BusSession(config, endpoint, credential, connector, view, dialer, metrics, registry,
                nanoClock);
        lock.lock();
        try {
            if (stopping) {
                return new SessionOutcome(AttemptResult.FAILED, EndReason.SHUTDOWN, Duration.ZERO, null, null, "shutdown");
            }
            session = s;
        } finally {
            lock.unlock();
        }
        try {
            return s.run();
        } finally {
            session = null;
        }
    }

    /** Section 4 items 4-5: the delay before the next attempt. */
    Duration nextDelay(SessionOutcome outcome) {
        // The session itself resets the sequence when it stayed welcomed long enough, however it ended: the
        // rebalance fast path below neither counts nor resets, but it must not swallow the long session's reset.
        if (outcome.welcomedFor().compareTo(config.timeouts().stableSession()) >= 0) {
            backoff.reset();
        }
        if (outcome.reconnectAtOnce()) {
            return Duration.ZERO; // the connection's stream ids ran out: nothing failed
        }
        if (outcome.reason() == EndReason.DRAINED && outcome.drain() != null && outcome.drain().isRebalance()) {
            Duration fast = rebalance.onRebalanceDrain();
            if (fast != null) {
                return fast;
            }
        }
        Duration delay = backoff.nextDelay();
        Duration retryAfter = outcome.retryAfter();
        if (retryAfter != null && retryAfter.compareTo(delay) > 0) {
            delay = retryAfter.compareTo(backoff.max()) > 0 ? backoff.max() : retryAfter;
        }
        return delay;
    }

    private boolean awaitSync() {
        if (view.isSynced()) {
            return !stopping;
        }
        setState(SessionState.SYNCING);
        LOG.info("waiting_for_metadata_sync").log();
        AutoCloseable listener = view.onChange(this::signal);
        try {
            lock.lock();
            try {
                while (!view.isSynced() && !stopping) {
                    // The listener wakes us; the timeout is a safety net only.
                    changed.await(1, TimeUnit.SECONDS);
                }
            } finally {
                lock.unlock();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            try {
                listener.close();
            } catch (Exception e) {
                LOG.debug("view_listener_close_failed").cause(e).log();
            }
        }
        return !stopping;
    }

    private boolean await(Duration delay) {
        long until = System.nanoTime() + delay.toNanos();
        lock.lock();
        try {
            while (!stopping) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return true;
                }
                changed.awaitNanos(left);
            }
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Graceful shutdown (R-BEH 8, section 4 item 6): with a welcomed session, send
     * {@code draining}, let open streams run until they close or {@code deadline} passes, then end
     * the session; otherwise stop at once. Returns when the loop has stopped.
     *
     * @param deadline how long open streams may still run
     * @throws InterruptedException when interrupted while waiting
     */
    public void shutdown(Duration deadline) throws InterruptedException {
        BusSession s;
        lock.lock();
        try {
            stopping = true;
            shutdownDeadline = deadline;
            s = session;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        if (s != null) {
            s.shutdown(deadline);
        }
        Thread t = thread;
        if (t != null) {
            t.join();
        }
    }

    /**
     * Stops at once: the session (if any) ends without draining.
     */
    public void abort() {
        lock.lock();
        try {
            stopping = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        BusSession s = session;
        if (s != null) {
            s.abort();
        }
    }

    /**
     * Where the loop and its session stand, as an operator reads it: the session's state while it is welcomed or
     * draining, else the loop's.
     *
     * @return state
     */
    public SessionState state() {
        BusSession s = session;
        return shown(state, s == null ? null : s.state());
    }

    /** Welcomed is connected, and a draining session is draining; before and after that the loop decides. */
    static SessionState shown(SessionState loopState, SessionLife.State attempt) {
        if (attempt == SessionLife.State.DRAINING) {
            return SessionState.DRAINING;
        }
        if (attempt == SessionLife.State.WELCOMED) {
            return SessionState.CONNECTED;
        }
        return loopState;
    }

    /**
     * The session running now, if any (welcomed or not).
     *
     * @return session or null
     */
    public BusSession session() {
        return session;
    }

    /**
     * When the next attempt starts, while backing off.
     *
     * @return instant or null
     */
    public Instant nextAttemptAt() {
        return nextAttemptAt;
    }

    /**
     * The last few session ends, oldest first.
     *
     * @return snapshot
     */
    public List<RelayStatus.SessionEnd> recentEnds() {
        synchronized (recentEnds) {
            return List.copyOf(recentEnds);
        }
    }

    private void remember(SessionOutcome o) {
        synchronized (recentEnds) {
            if (recentEnds.size() == RECENT_ENDS) {
                recentEnds.removeFirst();
            }
            recentEnds.addLast(new RelayStatus.SessionEnd(Instant.now(), o.result(), o.reason(), o.detail()));
        }
    }

    private void setState(SessionState s) {
        lock.lock();
        try {
            state = s;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void signal() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
