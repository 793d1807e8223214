package io.continuum.broker.app.config;

/**
 * One thing wrong with the configuration: where it came from, which field, and what is wrong.
 * Never carries a credential value.
 *
 * @param source  where the value came from, e.g. {@code /etc/continuum-event-broker/config.yaml}
 *                or {@code environment variable CONTINUUM_EVENT_BROKER_BUS_URL}
 * @param line    line in that file, 1-based; {@code 0} where the source has no lines
 * @param field   the field path, e.g. {@code reconnect_backoff.initial}
 * @param message what is wrong, in words an operator can act on
 */
public record ConfigProblem(String source, int line, String field, String message) {
    @Override
    public String toString() {
        return source + (line > 0 ? ":" + line : "") + ": " + field + ": " + message;
    }
}
