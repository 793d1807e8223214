package io.continuum.broker.metadata.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * "Equal jitter" exponential backoff between list/watch passes: the n-th consecutive failure waits a uniform
 * random time in {@code [d/2, d]} with {@code d = min(max, initial * 2^n)}, so a few hundred brokers that lost the
 * same API server spread their retries over half of each step. The relay's reconnect delays follow another rule
 * (the bus protocol's {@code [initial, d]}, in the relay's {@code FlooredJitterBackoff}); the two stay apart because
 * their rules differ. Not thread-safe (one per namespace thread).
 */
public final class EqualJitterBackoff {
    private final Duration initial;
    private final Duration max;
    private int failures;

    /**
     * Creates the sequence.
     *
     * @param initial first delay
     * @param max     largest delay
     */
    public EqualJitterBackoff(Duration initial, Duration max) {
        this.initial = Objects.requireNonNull(initial, "initial");
        this.max = Objects.requireNonNull(max, "max");
        if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("backoff needs 0 < initial <= max");
        }
    }

    /**
     * The delay before the next attempt, growing with each call.
     *
     * @return delay
     */
    public Duration next() {
        long base = initial.toNanos();
        long cap = max.toNanos();
        long d = Math.min(base, cap);
        for (int i = 0; i < failures && d < cap; i++) {
            d = d > cap / 2 ? cap : d * 2;
        }
        failures++;
        return Duration.ofNanos(d / 2 + ThreadLocalRandom.current().nextLong(d / 2 + 1));
    }

    /** Forgets past failures (after a successful pass). */
    public void reset() {
        failures = 0;
    }
}
