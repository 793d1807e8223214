package io.continuum.broker.app.logging;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Structured events on JUL: an event name and key/value fields, rendered by {@link LineFormatter}
 * as one line. Keys are fixed identifiers chosen by the code; values may come from outside (a
 * router message, a host name) and are escaped by the formatter, so they cannot forge lines.
 */
public final class Events {
    private Events() {
    }

    /**
     * Key/value fields of one event, in order.
     *
     * @param pairs {@code [key, value]} pairs
     */
    public record Fields(List<Object[]> pairs) {
        /**
         * Defensive copy.
         */
        public Fields {
            pairs = Collections.unmodifiableList(new ArrayList<>(pairs));
        }
    }

    /**
     * Logs an event.
     *
     * @param logger    logger
     * @param level     level
     * @param event     event name, e.g. {@code config_loaded}
     * @param keyValues alternating keys (strings) and values
     */
    public static void log(Logger logger, Level level, String event, Object... keyValues) {
        log(logger, level, event, null, keyValues);
    }

    /**
     * Logs an event with a cause; the formatter renders the cause on the same line.
     *
     * @param logger    logger
     * @param level     level
     * @param event     event name
     * @param thrown    cause, may be null
     * @param keyValues alternating keys (strings) and values
     */
    public static void log(Logger logger, Level level, String event, Throwable thrown, Object... keyValues) {
        if (!logger.isLoggable(level)) {
            return;
        }
        if (keyValues.length % 2 != 0) {
            throw new IllegalArgumentException("keyValues must be key/value pairs");
        }
        List<Object[]> pairs = new ArrayList<>(keyValues.length / 2);
        for (int i = 0; i < keyValues.length; i += 2) {
            pairs.add(new Object[] {String.valueOf(keyValues[i]), keyValues[i + 1]});
        }
        LogRecord r = new LogRecord(level, event);
        r.setLoggerName(logger.getName());
        r.setParameters(new Object[] {new Fields(pairs)});
        r.setThrown(thrown);
        logger.log(r);
    }
}
