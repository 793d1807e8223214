package io.continuum.broker.relay.session;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.SessionLimits;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;

/**
 * The session's clocks (bus-protocol-v1.md section 4 items 1-2): once welcomed, one timer thread sends a
 * heartbeat every negotiated interval and ends the session when the router has sent no frame for the idle
 * timeout; before that, a one-shot {@link Watchdog} bounds the wait for {@code welcome}.
 * <pre>
 *   (welcome) -> RUNNING --idle timeout--> session ended (idle_timeout)
 *                RUNNING --session ended by anything else--> stopped
 * </pre>
 */
final class SessionTimers {
    private final SessionLife life;
    private final SessionWriter writer;
    private final AtomicBoolean heartbeatInFlight = new AtomicBoolean();
    private volatile long lastFrameNanos;

    SessionTimers(SessionLife life, SessionWriter writer) {
        this.life = life;
        this.writer = writer;
    }

    /** Any frame from the router, heartbeat or not, proves it alive. */
    void frameArrived() {
        lastFrameNanos = System.nanoTime();
    }

    void start(SessionLimits limits) {
        Thread.ofVirtual().name("session-timer").start(() -> run(limits));
    }

    private void run(SessionLimits l) {
        long heartbeat = l.heartbeatInterval().toNanos();
        long idle = SessionLife.saturatedNanos(l.idleTimeout()); // no upper clamp in section 3.2: up to 2^53-1 ms
        long nextHeartbeat = System.nanoTime() + heartbeat;
        life.lock().lock();
        try {
            while (!life.ended()) {
                long now = System.nanoTime();
                long idleAt = lastFrameNanos + idle;
                // A router that takes nothing is gone too (docs/protocol.md 8a): a session frame whose write has
                // waited for the idle timeout ends the session the same way, however alive its heartbeats say it is.
                long stalledSince = writer.stalledSinceNanos();
                long stalledAt = stalledSince == 0 ? idleAt : stalledSince + idle;
                if (now - idleAt >= 0 || now - stalledAt >= 0) {
                    String detail = now - idleAt >= 0
                            ? "no frame from the router for " + l.idleTimeout().toMillis() + " ms"
                            : "the router took no session frame for " + l.idleTimeout().toMillis() + " ms";
                    life.lock().unlock();
                    try {
                        life.end(AttemptResult.WELCOMED, EndReason.IDLE_TIMEOUT, detail);
                    } finally {
                        life.lock().lock();
                    }
                    return;
                }
                if (now - nextHeartbeat >= 0) {
                    // Written by its own thread: a router that stops reading the session stream blocks the
                    // write once its window is spent, and that must not stop this loop from seeing it go idle.
                    if (heartbeatInFlight.compareAndSet(false, true)) {
                        Thread.ofVirtual().name("session-heartbeat").start(() -> {
                            try {
                                writer.send(Frame.Heartbeat.INSTANCE);
                            } finally {
                                heartbeatInFlight.set(false);
                            }
                        });
                    }
                    nextHeartbeat = now + heartbeat;
                    continue;
                }
                long wait = Math.min(nextHeartbeat - now, Math.min(idleAt - now, stalledAt - now));
                life.awaitChange(Math.max(wait, TimeUnit.MILLISECONDS.toNanos(1)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            life.lock().unlock();
        }
    }

    /** A one-shot deadline on a virtual thread, cancelled by {@link #cancel()}. */
    static final class Watchdog {
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
