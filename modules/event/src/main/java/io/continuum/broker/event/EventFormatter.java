package io.continuum.broker.event;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.logging.Formatter;
import java.util.logging.LogRecord;


/**
 * The one formatter of the broker's log: one line per record, logfmt or JSON, and the only place where
 * values are quoted and escaped.
 * <p>
 * Every line starts with {@code ts} (UTC, ISO-8601), {@code level} ({@code error}, {@code warn},
 * {@code info}, {@code debug}, {@code trace}), {@code logger} and {@code event}. For an event of an
 * {@link EventLog} the fields follow in order; any other record (Helidon, OkHttp, the Kubernetes
 * client, SLF4J through its JUL binding) is {@code event=library} with its formatted message as
 * {@code msg}. A cause adds {@code error_class} (its class), {@code error} (class and message of it and
 * of up to four causes) and, when stack traces are on, {@code stack_trace}.
 * <p>
 * logfmt follows the grammar of go-logfmt's decoder: a value is bare when it is non-empty printable ASCII
 * without {@code "}, {@code =} or {@code \}; otherwise it is quoted, with {@code "} and {@code \} escaped,
 * {@code \n}, {@code \r}, {@code \t} written as such, and every other control or non-ASCII character as
 * {@code \}{@code uXXXX}. JSON is written by {@link JsonWriter}, non-ASCII escaped. Either way a line is ASCII, and a
 * value can never end the line or the quoted string it sits in.
 */
public final class EventFormatter extends Formatter {
    /** The event name of every record not written through an {@link EventLog}. */
    public static final String LIBRARY_EVENT = "library";

    /** Line syntax. */
    public enum Style {
        /** {@code key=value} pairs separated by spaces. */
        LOGFMT,
        /** One JSON object. */
        JSON
    }

    private final Style style;
    private final boolean stackTraces;

    /**
     * A formatter.
     *
     * @param style       line syntax
     * @param stackTraces whether a cause's stack trace is written ({@code stack_trace})
     */
    public EventFormatter(Style style, boolean stackTraces) {
        this.style = style;
        this.stackTraces = stackTraces;
    }

    /**
     * The line syntax.
     *
     * @return style
     */
    public Style style() {
        return style;
    }

    /**
     * Whether stack traces are written.
     *
     * @return true when {@code stack_trace} is written for a cause
     */
    public boolean stackTraces() {
        return stackTraces;
    }

    @Override
    public String format(LogRecord record) {
        Line line = style == Style.JSON ? new JsonLine() : new LogfmtLine();
        line.add("ts", Instant.ofEpochMilli(record.getMillis()).toString());
        line.add("level", Severity.of(record.getLevel()).label());
        line.add("logger", record.getLoggerName());
        Object[] params = record.getParameters();
        if (params != null && params.length == 1 && params[0] instanceof EventFields fields) {
            line.add("event", record.getMessage());
            for (EventFields.Field f : fields.list()) {
                line.add(f.key(), f.value());
            }
        } else {
            line.add("event", LIBRARY_EVENT);
            String msg;
            try {
                msg = formatMessage(record);
            } catch (RuntimeException e) {
                msg = record.getMessage();
            }
            line.add("msg", msg);
        }
        Throwable t = record.getThrown();
        if (t != null) {
            line.add("error_class", t.getClass().getName());
            line.add("error", describe(t));
            if (stackTraces) {
                StringWriter w = new StringWriter();
                t.printStackTrace(new PrintWriter(w));
                line.add("stack_trace", w.toString().stripTrailing());
            }
        }
        return line.finish();
    }

    /**
     * A throwable as one short string: class and message of it and of up to four causes, no stack.
     *
     * @return description
     */
    public static String describe(Throwable t) {
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

    /** The fields alone as logfmt (for {@link EventFields#toString()}). */
    static String logfmt(EventFields fields) {
        LogfmtLine line = new LogfmtLine();
        for (EventFields.Field f : fields.list()) {
            line.add(f.key(), f.value());
        }
        return line.sb.toString();
    }

    private interface Line {
        void add(String key, Object value);

        String finish();
    }

    private static final class LogfmtLine implements Line {
        private final StringBuilder sb = new StringBuilder(160);

        @Override
        public void add(String key, Object value) {
            if (!sb.isEmpty()) {
                sb.append(' ');
            }
            // Keys are checked identifiers (Event.checkKey) or the fixed ones above.
            sb.append(key).append('=');
            if (value == null) {
                sb.append("null");
                return;
            }
            String v = String.valueOf(value);
            if (!v.isEmpty() && v.chars().allMatch(LogfmtLine::bare)) {
                sb.append(v);
                return;
            }
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
                        if (c < 0x20 || c > 0x7e) {
                            sb.append("\\u").append(HEX[c >> 12 & 0xf]).append(HEX[c >> 8 & 0xf])
                                    .append(HEX[c >> 4 & 0xf]).append(HEX[c & 0xf]);
                        } else {
                            sb.append(c);
                        }
                    }
                }
            }
            sb.append('"');
        }

        private static boolean bare(int c) {
            return c > 0x20 && c < 0x7f && c != '"' && c != '=' && c != '\\';
        }

        @Override
        public String finish() {
            return sb.append(System.lineSeparator()).toString();
        }
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private static final class JsonLine implements Line {
        private final JsonWriter json = new JsonWriter().beginObject();

        @Override
        public void add(String key, Object value) {
            json.field(key, value);
        }

        @Override
        public String finish() {
            return json.endObject().finish() + System.lineSeparator();
        }
    }
}
