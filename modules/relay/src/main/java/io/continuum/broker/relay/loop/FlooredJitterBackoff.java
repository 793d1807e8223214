package io.continuum.broker.relay.loop;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

import io.continuum.broker.relay.api.ReconnectBackoff;

/**
 * The sequence of jittered exponential reconnect delays drawn from a {@link ReconnectBackoff} range
 * (bus-protocol-v1.md section 4 item 4, R-BEH 6): the n-th consecutive delay is drawn uniformly from
 * {@code [initial, min(max, initial x 2^n)]}. {@link #reset} after a session that stayed welcomed for the
 * stable-session time. The floor is the protocol's: however lucky the draw, no reconnect comes sooner than
 * {@code initial}, unlike the metadata watch's "equal jitter" ({@code EqualJitterBackoff}, {@code [d/2, d]}).
 * Not thread-safe: the session loop owns it.
 */
public final class FlooredJitterBackoff {
    private final long initialNanos;
    private final long maxNanos;
    private final RandomGenerator random;
    private int attempt;

    /**
     * @param range  the configured range
     * @param random jitter source (injectable so tests can check the bounds deterministically)
     */
    public FlooredJitterBackoff(ReconnectBackoff range, RandomGenerator random) {
        this.initialNanos = range.initial().toNanos();
        this.maxNanos = range.max().toNanos();
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

    /** {@code min(max, initial x 2^n)} in nanoseconds, for the 1-based position n, without overflowing. */
    long upperBoundNanos(int n) {
        if (n >= 62 || initialNanos > (maxNanos >> Math.min(n, 62))) {
            return maxNanos;
        }
        return Math.min(maxNanos, initialNanos << n);
    }

    /** Starts the sequence over (after a stable session). */
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
