package io.continuum.broker.event;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * One event being built: a name, typed fields and an optional cause, logged by {@link #log()}.
 * Obtained from an {@link EventLog}:
 * <pre>{@code
 * LOG.info("stream_closed").field("stream_id", id).field("code", code.wire()).log();
 * LOG.warn("dial_failed").field("stream_id", id).cause(e).log();
 * }</pre>
 * Keys are fixed identifiers chosen by the code ({@code [a-z][a-z0-9_]*}, dot-separated parts allowed)
 * and are checked even when the event is not logged, so a bad key fails the tests that reach the line
 * at any level. Values may come from outside (a router's drain reason, a host name): they are quoted and
 * escaped by {@link EventFormatter} and nowhere else, so they can never start a line or forge a field.
 * String values longer than {@value #MAX_VALUE_CHARS} characters are cut (the cut is marked). Not
 * thread-safe: build and log on one thread.
 */
public final class Event {
    /** Longest string value kept whole; a router can send a drain reason as long as a frame. */
    public static final int MAX_VALUE_CHARS = 1024;

    /** Keys the formatter writes itself. */
    static final Set<String> RESERVED = Set.of("ts", "level", "logger", "event", "msg", "error", "error_class",
            "stack_trace");

    private final Logger logger;
    private final Severity severity;
    private final String name;
    private final List<EventFields.Field> fields;
    private Throwable cause;

    Event(Logger logger, Severity severity, String name, boolean enabled) {
        this.logger = logger;
        this.severity = severity;
        this.name = checkName(name);
        this.fields = enabled ? new ArrayList<>(6) : null;
    }

    /**
     * Adds a text field.
     *
     * @param value value, null is written as {@code null}
     */
    public Event field(String key, String value) {
        return add(key, value == null || value.length() <= MAX_VALUE_CHARS ? value
                : value.substring(0, MAX_VALUE_CHARS) + "...(" + (value.length() - MAX_VALUE_CHARS) + " more chars)");
    }

    /**
     * Adds an integer field.
     */
    public Event field(String key, long value) {
        return add(key, value);
    }

    /**
     * Adds a boolean field.
     */
    public Event field(String key, boolean value) {
        return add(key, value);
    }

    /**
     * Attaches the exception behind the event: the formatter writes its class ({@code error_class}), its
     * and its causes' messages ({@code error}) and, when enabled, its stack trace ({@code stack_trace}).
     *
     * @param t the exception, may be null
     */
    public Event cause(Throwable t) {
        if (fields != null) {
            cause = t;
        }
        return this;
    }

    /** Logs the event (nothing when its level is off). */
    public void log() {
        if (fields == null) {
            return;
        }
        LogRecord r = new LogRecord(severity.level(), name);
        r.setLoggerName(logger.getName());
        r.setParameters(new Object[] {new EventFields(fields)});
        r.setThrown(cause);
        logger.log(r);
    }

    private Event add(String key, Object value) {
        checkKey(key);
        if (fields != null) {
            for (EventFields.Field f : fields) {
                if (f.key().equals(key)) {
                    throw new IllegalArgumentException("field '" + key + "' given twice in event " + name);
                }
            }
            fields.add(new EventFields.Field(key, value));
        }
        return this;
    }

    static String checkName(String name) {
        if (!identifier(name, false)) {
            throw new IllegalArgumentException("event name must match [a-z][a-z0-9_]*: " + name);
        }
        return name;
    }

    static void checkKey(String key) {
        if (!identifier(key, true)) {
            throw new IllegalArgumentException("field key must match [a-z][a-z0-9_]*(.[a-z][a-z0-9_]*)*: " + key);
        }
        if (RESERVED.contains(key)) {
            throw new IllegalArgumentException("field key '" + key + "' is written by the formatter itself");
        }
    }

    private static boolean identifier(String s, boolean dots) {
        if (s == null || s.isEmpty()) {
            return false;
        }
        boolean partStart = true;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (partStart) {
                if (c < 'a' || c > 'z') {
                    return false;
                }
                partStart = false;
            } else if (c == '.' && dots) {
                partStart = true;
            } else if (!(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_')) {
                return false;
            }
        }
        return !partStart;
    }
}
