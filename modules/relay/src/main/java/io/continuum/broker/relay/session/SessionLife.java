package io.continuum.broker.relay.session;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.transport.BusConnection;

/**
 * One session's state and its one end, shared by the session's jobs (handshake, dispatch, timers, drain,
 * teardown):
 * <pre>
 *   CONNECTING -> AWAITING_WELCOME -> WELCOMED -> DRAINING -> ENDED
 *            \______________\______________\___________\____-> ENDED
 * </pre>
 * The first {@link #end} decides how the session ended and closes the bus connection, which ends every data
 * stream with it. Every change is signalled on one condition, so a job waiting for "the streams are gone",
 * "the deadline moved" or "the session ended" re-checks on each.
 */
public final class SessionLife {
    /** Where one attempt is, in the order drawn above; the loop reads it for the status page. */
    public enum State { CONNECTING, AWAITING_WELCOME, WELCOMED, DRAINING, ENDED }

    /** How the session ended: the first end wins. */
    record End(AttemptResult result, EndReason reason, String detail) {
    }

    /**
     * The longest wait: a router's {@code deadline_ms} or idle timeout may be up to 2^53-1 ms, beyond what a long of
     * nanoseconds holds.
     */
    private static final long LONGEST_WAIT_NANOS = Long.MAX_VALUE / 4;

    private final AtomicReference<State> state = new AtomicReference<>(State.CONNECTING);
    private final AtomicReference<End> end = new AtomicReference<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private volatile BusConnection connection;
    /** The reader accepted a {@code welcome}; guarded by {@link #lock}. */
    private boolean welcomeRead;
    /** A shutdown abandoned the attempt before any {@code welcome} was accepted; guarded by {@link #lock}. */
    private boolean abandonedBeforeWelcome;
    /** Test seam: runs on the session's thread right after a {@code welcome} was accepted. */
    volatile Runnable afterWelcomeRead;

    State state() {
        return state.get();
    }

    /** Moves to {@code next} only from {@code expected}; a job changing its own state with it holds {@link #lock()}. */
    boolean advance(State expected, State next) {
        if (!state.compareAndSet(expected, next)) {
            return false;
        }
        signal();
        return true;
    }

    void set(State next) {
        state.set(next);
        signal();
    }

    End end() {
        return end.get();
    }

    boolean ended() {
        return end.get() != null;
    }

    /**
     * Ends the session once; the first caller decides the reason. Closes the connection, which ends every
     * data stream with it (no {@code stream_closed} is sent for them).
     *
     * @return always false, so a step that ends the session can {@code return life.end(...)}
     */
    boolean end(AttemptResult result, EndReason reason, String detail) {
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

    /** The result a shutdown or abort ends with: a welcomed session stays counted as welcomed. */
    AttemptResult resultSoFar() {
        State st = state.get();
        return st == State.WELCOMED || st == State.DRAINING ? AttemptResult.WELCOMED : AttemptResult.FAILED;
    }

    BusConnection connection() {
        return connection;
    }

    void connection(BusConnection c) {
        connection = c;
    }

    /**
     * The reader accepted a {@code welcome}: from now on a shutdown drains the session (sends {@code draining})
     * once it counts as welcomed, instead of abandoning it. One decision with {@link #abandonBeforeWelcomeLocked}.
     *
     * @return false when a shutdown abandoned the attempt first
     */
    boolean welcomeRead() {
        lock.lock();
        try {
            if (abandonedBeforeWelcome) {
                return false;
            }
            welcomeRead = true;
        } finally {
            lock.unlock();
        }
        Runnable hook = afterWelcomeRead;
        if (hook != null) {
            hook.run();
        }
        return true;
    }

    /**
     * Lock held: a shutdown before welcome. Abandons the attempt unless a {@code welcome} was accepted already.
     *
     * @return false when a welcome was accepted: the session is about to count as welcomed, and is drained then
     */
    boolean abandonBeforeWelcomeLocked() {
        if (welcomeRead) {
            return false;
        }
        abandonedBeforeWelcome = true;
        return true;
    }

    /** Guards the jobs' own state that must change together with the session's (drain deadline, connecting thread). */
    ReentrantLock lock() {
        return lock;
    }

    /** Waits for the next change, holding {@link #lock()}. */
    long awaitChange(long nanos) throws InterruptedException {
        return changed.awaitNanos(nanos);
    }

    void signal() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Waits until {@code done} holds (re-checked on every change) or {@code timeout} passes. */
    void awaitUntil(BooleanSupplier done, Duration timeout) {
        long until = System.nanoTime() + saturatedNanos(timeout);
        lock.lock();
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
            lock.unlock();
        }
    }

    static long saturatedNanos(Duration d) {
        return d.compareTo(Duration.ofNanos(LONGEST_WAIT_NANOS)) >= 0 ? LONGEST_WAIT_NANOS : d.toNanos();
    }

    /** A detail short enough for one log field (a router's text or an exception message can be long). */
    public static String clip(String s) {
        if (s == null) {
            return "";
        }
        return s.length() > 200 ? s.substring(0, 200) : s;
    }
}
