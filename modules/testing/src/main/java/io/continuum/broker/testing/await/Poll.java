package io.continuum.broker.testing.await;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The one polling wait of the tests: for a condition no latch or future can report (a counter, a gauge, a thread
 * that has parked). It bounds the wait and never asserts on time: a condition that holds returns at once, one that
 * never holds fails the test after the bound with what it waited for.
 */
public final class Poll {
    /** The bound every test uses unless it says otherwise. */
    public static final Duration WAIT = Duration.ofSeconds(20);
    private static final long SLICE_NANOS = 5_000_000L;

    private Poll() {
    }

    /**
     * Waits up to {@link #WAIT} until {@code condition} holds.
     *
     * @param what what the test waits for, for the failure message
     * @throws AssertionError when it does not hold in time, or the thread is interrupted
     */
    public static void await(BooleanSupplier condition, String what) {
        await(condition, WAIT, what);
    }

    /**
     * Waits up to {@code timeout} until {@code condition} holds.
     *
     * @param what what the test waits for, for the failure message
     * @throws AssertionError when it does not hold in time, or the thread is interrupted
     */
    public static void await(BooleanSupplier condition, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + timeout + ": " + what);
            }
            LockSupport.parkNanos(SLICE_NANOS);
            if (Thread.interrupted()) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what);
            }
        }
    }
}
