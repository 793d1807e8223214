package io.continuum.broker.event;

import java.util.logging.Level;

/**
 * The level of an event, as written in the {@code level} field, and the java.util.logging level it is
 * logged at.
 */
public enum Severity {
    /** Something failed that an operator must look at ({@link Level#SEVERE}). */
    ERROR("error", Level.SEVERE),
    /** Something went wrong and the broker copes ({@link Level#WARNING}). */
    WARN("warn", Level.WARNING),
    /** The normal life of the broker ({@link Level#INFO}). */
    INFO("info", Level.INFO),
    /** Detail for a developer or an operator chasing a problem ({@link Level#FINE}). */
    DEBUG("debug", Level.FINE),
    /** Even more detail ({@link Level#FINER}). */
    TRACE("trace", Level.FINER);

    private final String label;
    private final Level level;

    Severity(String label, Level level) {
        this.label = label;
        this.level = level;
    }

    /**
     * The JUL level events of this severity are logged at.
     *
     * @return level
     */
    public Level level() {
        return level;
    }

    /**
     * The word written in the {@code level} field.
     *
     * @return {@code error}, {@code warn}, {@code info}, {@code debug} or {@code trace}
     */
    public String label() {
        return label;
    }

    /**
     * The severity a JUL level is shown as (for records of libraries, which use any JUL level).
     *
     * @return the severity whose level is the highest not above {@code level}
     */
    public static Severity of(Level level) {
        int v = level.intValue();
        if (v >= Level.SEVERE.intValue()) {
            return ERROR;
        }
        if (v >= Level.WARNING.intValue()) {
            return WARN;
        }
        if (v >= Level.INFO.intValue()) {
            return INFO;
        }
        if (v >= Level.FINE.intValue()) {
            return DEBUG;
        }
        return TRACE;
    }

    /**
     * Parses the word written in the {@code level} field (and accepted in a configuration).
     *
     * @param label {@code error}, {@code warn}, {@code info}, {@code debug} or {@code trace}
     * @return the severity
     * @throws IllegalArgumentException for any other word
     */
    public static Severity parse(String label) {
        for (Severity s : values()) {
            if (s.label.equals(label)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown level '" + label + "' (error, warn, info, debug, trace)");
    }
}
