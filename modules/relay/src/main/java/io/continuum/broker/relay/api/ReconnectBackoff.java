package io.continuum.broker.relay.api;

import java.time.Duration;
import java.util.Objects;

/**
 * The range reconnect delays are drawn from ({@code reconnect_backoff}, R-BEH 6): the n-th consecutive delay
 * lies in {@code [initial, min(max, initial x 2^n)]}. The configuration's value and the relay's, one type.
 *
 * @param initial every delay's lower bound, the first delay's upper one
 * @param max     every delay's upper bound
 */
public record ReconnectBackoff(Duration initial, Duration max) {
    /** The R-CFG defaults. */
    public static final ReconnectBackoff DEFAULT = new ReconnectBackoff(Duration.ofSeconds(1), Duration.ofSeconds(60));

    /** Refuses a range the delays could not be drawn from. */
    public ReconnectBackoff {
        Objects.requireNonNull(initial, "initial");
        Objects.requireNonNull(max, "max");
        if (initial.isNegative() || initial.isZero() || initial.compareTo(max) > 0) {
            throw new IllegalArgumentException("need 0 < initial <= max, got " + initial + " and " + max);
        }
    }
}
