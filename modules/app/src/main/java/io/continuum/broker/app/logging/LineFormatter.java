package io.continuum.broker.app.logging;

import java.time.Instant;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import io.continuum.broker.app.config.LogFormat;
import io.continuum.broker.app.observe.Json;

/**
 * One line per event, {@code key=value} or JSON ({@code log_format}). Fixed leading fields: {@code ts}
 * (UTC, ISO-8601), {@code level} ({@code error}, {@code warn}, {@code info}, {@code debug},
 * {@code trace}), {@code logger}, then {@code event} and its fields for {@link Events}, or {@code msg}
 * for plain JUL records (Helidon's), and {@code error} for a cause. Newlines and control characters
 * in values are escaped, so a record is always exactly one line.
 */
public final class LineFormatter extends Formatter {
    private final LogFormat format;

    /**
     * Creates a formatter.
     *
     * @param format line format
     */
    public LineFormatter(LogFormat format) {
        this.format = format;
    }

    @Override
    public String format(LogRecord record) {
        Line line = format == LogFormat.JSON ? new JsonLine() : new KeyValueLine();
        line.add("ts", Instant.ofEpochMilli(record.getMillis()).toString());
        line.add("level", level(record.getLevel()));
        line.add("logger", record.getLoggerName());
        Object[] params = record.getParameters();
        if (params != null && params.length == 1 && params[0] instanceof Events.Fields fields) {
            line.add("event", record.getMessage());
            for (Object[] kv : fields.pairs()) {
                line.add((String) kv[0], kv[1]);
            }
        } else {
            line.add("msg", formatMessage(record));
        }
        Throwable t = record.getThrown();
        if (t != null) {
            line.add("error", describe(t));
        }
        return line.finish();
    }

    /**
     * A throwable as one short string: class and message of it and its causes, no stack.
     *
     * @param t throwable
     * @return description
     */
    static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder();
        Throwable c = t;
        int depth = 0;
        while (c != null && depth < 5) {
            if (depth > 0) {
                sb.append("; caused by ");
            }
            sb.append(c.getClass().getName());
            if (c.getMessage() != null) {
                sb.append(": ").append(c.getMessage());
            }
            c = c.getCause() == c ? null : c.getCause();
            depth++;
        }
        return sb.toString();
    }

    static String level(Level level) {
        int v = level.intValue();
        if (v >= Level.SEVERE.intValue()) {
            return "error";
        }
        if (v >= Level.WARNING.intValue()) {
            return "warn";
        }
        if (v >= Level.INFO.intValue()) {
            return "info";
        }
        if (v >= Level.FINE.intValue()) {
            return "debug";
        }
        return "trace";
    }

    private interface Line {
        void add(String key, Object value);

        String finish();
    }

    private static final class KeyValueLine implements Line {
        private final StringBuilder sb = new StringBuilder(160);

        @Override
        public void add(String key, Object value) {
            if (!sb.isEmpty()) {
                sb.append(' ');
            }
            sb.append(key).append('=');
            String v = String.valueOf(value);
            if (!v.isEmpty() && v.chars().allMatch(KeyValueLine::bare)) {
                sb.append(v);
            } else {
                sb.append('"');
                for (int i = 0; i < v.length(); i++) {
                    char c = v.charAt(i);
                    switch (c) {
                        case '"' -> sb.append("\\\"");
                        case '\\' -> sb.append("\\\\");
                        case '\n' -> sb.append("\\n");
                        case '\r' -> sb.append("\\r");
                        case '\t' -> sb.append("\\t");
                        default -> {
                            if (c < 0x20 || c == 0x7f || Character.isSurrogate(c) || (c >= 0x80 && c < 0xa0)
                                    || c == 0x2028 || c == 0x2029) {
                                sb.append(String.format("\\u%04x", (int) c));
                            } else {
                                sb.append(c);
                            }
                        }
                    }
                }
                sb.append('"');
            }
        }

        private static boolean bare(int c) {
            return c > 0x20 && c < 0x7f && c != '"' && c != '=' && c != '\\';
        }

        @Override
        public String finish() {
            return sb.append(System.lineSeparator()).toString();
        }
    }

    private static final class JsonLine implements Line {
        private final StringBuilder sb = new StringBuilder(192).append('{');

        @Override
        public void add(String key, Object value) {
            if (sb.length() > 1) {
                sb.append(',');
            }
            Json.string(sb, key).append(':');
            if (value instanceof Number || value instanceof Boolean) {
                sb.append(value);
            } else {
                Json.string(sb, value == null ? null : String.valueOf(value));
            }
        }

        @Override
        public String finish() {
            return sb.append('}').append(System.lineSeparator()).toString();
        }
    }
}
