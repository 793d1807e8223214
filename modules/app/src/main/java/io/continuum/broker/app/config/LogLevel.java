package io.continuum.broker.app.config;

import java.util.Locale;
import java.util.Optional;

/**
 * How much the broker logs ({@code log_level}, an addition beyond R-CFG), named as the log lines
 * name their levels.
 */
public enum LogLevel {
    /** Failures only. */
    ERROR,
    /** Failures and conditions an operator should look at. */
    WARN,
    /** Every event of the broker's life (the default). */
    INFO,
    /** Everything, including library detail. */
    DEBUG;

    /**
     * Parses the configured spelling.
     *
     * @param text {@code error}, {@code warn}, {@code info} or {@code debug}
     * @return level, or empty if unknown
     */
    public static Optional<LogLevel> parse(String text) {
        for (LogLevel l : values()) {
            if (l.toString().equals(text)) {
                return Optional.of(l);
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
