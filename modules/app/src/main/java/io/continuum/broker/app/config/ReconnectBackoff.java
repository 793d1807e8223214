package io.continuum.broker.app.config;

import java.time.Duration;

/**
 * The jittered exponential reconnect range ({@code reconnect_backoff}, R-BEH-6).
 *
 * @param initial first delay, at most {@code max}
 * @param max     largest delay
 */
public record ReconnectBackoff(Duration initial, Duration max) {
    /** Default initial delay. */
    public static final Duration DEFAULT_INITIAL = Duration.ofSeconds(1);
    /** Default maximum delay. */
    public static final Duration DEFAULT_MAX = Duration.ofSeconds(60);
}
