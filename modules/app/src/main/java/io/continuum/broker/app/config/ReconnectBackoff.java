package io.continuum.broker.app.config;

import java.time.Duration;

/**
 * The jittered exponential reconnect range ({@code reconnect_backoff}, R-BEH-6); defaults and
 * bounds in {@link Fields}.
 *
 * @param initial first delay, at most {@code max}
 * @param max     largest delay
 */
public record ReconnectBackoff(Duration initial, Duration max) {
}
