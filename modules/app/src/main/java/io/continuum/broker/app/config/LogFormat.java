package io.continuum.broker.app.config;

import java.util.Optional;

/**
 * Log line format ({@code log_format}, an addition beyond R-CFG): {@code key_value} (default) or
 * {@code json}, one line per event either way.
 */
public enum LogFormat {
    /** {@code ts=… level=INFO event=… key=value}. */
    KEY_VALUE("key_value"),
    /** One JSON object per line. */
    JSON("json");

    private final String text;

    LogFormat(String text) {
        this.text = text;
    }

    /**
     * Parses the configured spelling.
     *
     * @param text {@code key_value} or {@code json}
     * @return format, or empty if unknown
     */
    public static Optional<LogFormat> parse(String text) {
        for (LogFormat f : values()) {
            if (f.text.equals(text)) {
                return Optional.of(f);
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return text;
    }
}
