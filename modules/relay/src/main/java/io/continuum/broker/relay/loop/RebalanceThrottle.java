package io.continuum.broker.relay.loop;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * The rebalance fast path (bus-protocol-v1.md section 4 item 5, R-BEH 7): a drain whose reason is
 * {@code rebalance} reconnects after 250-500 ms, unless another rebalance drain happened within the
 * last 60 s; then the exponential backoff applies. The fast path neither counts as a backoff delay
 * nor resets the backoff sequence.
 */
public final class RebalanceThrottle {
    /** Window within which a second rebalance loses the fast path. */
    public static final Duration WINDOW = Duration.ofSeconds(60);
    /** Lower bound of the fast reconnect delay. */
    public static final Duration FAST_MIN = Duration.ofMillis(250);
    /** Upper bound of the fast reconnect delay. */
    public static final Duration FAST_MAX = Duration.ofMillis(500);

    private final LongSupplier nanoClock;
    private final RandomGenerator random;
    private long lastRebalanceNanos;
    private boolean seenRebalance;

    /**
     * Creates a throttle.
     *
     * @param nanoClock monotonic clock in nanoseconds ({@code System::nanoTime} in production)
     * @param random    jitter source
     */
    public RebalanceThrottle(LongSupplier nanoClock, RandomGenerator random) {
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.random = Objects.requireNonNull(random, "random");
    }

    /**
     * Records a rebalance drain and says whether it may take the fast path.
     *
     * @return the fast delay (250-500 ms), or null when another rebalance came within 60 s
     */
    public Duration onRebalanceDrain() {
        long now = nanoClock.getAsLong();
        boolean recent = seenRebalance && now - lastRebalanceNanos < WINDOW.toNanos();
        seenRebalance = true;
        lastRebalanceNanos = now;
        if (recent) {
            return null;
        }
        return Duration.ofNanos(random.nextLong(FAST_MIN.toNanos(), FAST_MAX.toNanos() + 1));
    }
}
