package io.continuum.broker.relay.session;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Jittered exponential reconnect delays (bus-protocol-v1.md section 4 item 4, R-BEH 6): the n-th
 * consecutive delay is drawn uniformly from {@code [initial, min(max, initial x 2^n)]}, so every
 * delay lies within {@code [initial, max]}. {@link #reset} after a session that stayed welcomed
 * for at least {@link #STABLE_SESSION}. Not thread-safe: the session loop owns it.
 */
public final class ReconnectBackoff {
    /** A session welcomed at least this long resets the sequence. */
    public static final Duration STABLE_SESSION = Duration.ofSeconds(60);

    private final long initialNanos;
    private final long maxNanos;
    private final RandomGenerator random;
    private int attempt;

    /**
     * Creates a backoff.
     *
     * @param initial first delay's lower bound (and every delay's)
     * @param max     upper bound of every delay
     * @param random  jitter source (injectable so tests can check the bounds deterministically)
     */
    public ReconnectBackoff(Duration initial, Duration max, RandomGenerator random) {
        if (initial.isNegative() || initial.isZero() || initial.compareTo(max) > 0) {
            throw new IllegalArgumentException("need 0 < initial <= max, got " + initial + " and " + max);
        }
        this.initialNanos = initial.toNanos();
        this.maxNanos = max.toNanos();
        this.random = Objects.requireNonNull(random, "random");
    }

    /**
     * The next delay of the sequence, and advances it.
     *
     * @return delay in {@code [initial, min(max, initial x 2^n)]}
     */
    public Duration nextDelay() {
        attempt = Math.min(attempt + 1, 62);
        long upper = upperBoundNanos(attempt);
        long delay = upper == initialNanos ? initialNanos : random.nextLong(initialNanos, upper + 1);
        return Duration.ofNanos(delay);
    }

    /**
     * Upper bound of the n-th delay.
     *
     * @param n 1-based position in the sequence
     * @return {@code min(max, initial x 2^n)} in nanoseconds
     */
    long upperBoundNanos(int n) {
        if (n >= 62 || initialNanos > (maxNanos >> Math.min(n, 62))) {
            return maxNanos;
        }
        return Math.min(maxNanos, initialNanos << n);
    }

    /**
     * Starts the sequence over (after a session welcomed for {@link #STABLE_SESSION}).
     */
    public void reset() {
        attempt = 0;
    }

    /**
     * How many delays were drawn since the last reset.
     *
     * @return n of the last delay
     */
    public int attempt() {
        return attempt;
    }

    /**
     * The upper bound of every delay.
     *
     * @return max delay
     */
    public Duration max() {
        return Duration.ofNanos(maxNanos);
    }
}
