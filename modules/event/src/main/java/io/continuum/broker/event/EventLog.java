package io.continuum.broker.event;

import java.util.Objects;
import java.util.logging.Logger;

/**
 * Where a class's events go: a java.util.logging logger, held strongly (JUL keeps loggers only weakly,
 * and a collected logger loses its configured level). Every log site of the broker goes through one:
 * <pre>{@code
 * private static final EventLog LOG = EventLog.of(BusSession.class);
 * ...
 * LOG.info("session_welcomed").field("session_id", id).field("heartbeat_ms", ms).log();
 * }</pre>
 * An event whose level is off costs one check and no allocation.
 */
public final class EventLog {
    private final Logger logger;
    private final Event[] disabled = new Event[Severity.values().length];

    private EventLog(Logger logger) {
        this.logger = logger;
    }

    /**
     * The event log named after a class.
     *
     * @param type class
     * @return event log
     */
    public static EventLog of(Class<?> type) {
        return named(type.getName());
    }

    /**
     * The event log of a logger name.
     *
     * @param loggerName JUL logger name, written in the {@code logger} field
     * @return event log
     */
    public static EventLog named(String loggerName) {
        return new EventLog(Logger.getLogger(Objects.requireNonNull(loggerName, "loggerName")));
    }

    /**
     * The logger name.
     *
     * @return name
     */
    public String name() {
        return logger.getName();
    }

    /**
     * Whether events of a severity are logged now.
     *
     * @return true when on
     */
    public boolean enabled(Severity severity) {
        return logger.isLoggable(severity.level());
    }

    /**
     * Starts an event.
     *
     * @param name     event name, {@code [a-z][a-z0-9_]*}
     * @return the event to add fields to and {@link Event#log()}
     */
    public Event at(Severity severity, String name) {
        if (logger.isLoggable(severity.level())) {
            return new Event(logger, severity, name, true);
        }
        Event.checkName(name);
        Event off = disabled[severity.ordinal()];
        if (off == null) {
            // Holds no state (fields are only kept when enabled), so one instance per severity serves all threads.
            off = new Event(logger, severity, "off", false);
            disabled[severity.ordinal()] = off;
        }
        return off;
    }

    /**
     * Starts an {@link Severity#ERROR} event.
     *
     * @return event
     */
    public Event error(String name) {
        return at(Severity.ERROR, name);
    }

    /**
     * Starts a {@link Severity#WARN} event.
     *
     * @return event
     */
    public Event warn(String name) {
        return at(Severity.WARN, name);
    }

    /**
     * Starts an {@link Severity#INFO} event.
     *
     * @return event
     */
    public Event info(String name) {
        return at(Severity.INFO, name);
    }

    /**
     * Starts a {@link Severity#DEBUG} event.
     *
     * @return event
     */
    public Event debug(String name) {
        return at(Severity.DEBUG, name);
    }

    /**
     * Starts a {@link Severity#TRACE} event.
     *
     * @return event
     */
    public Event trace(String name) {
        return at(Severity.TRACE, name);
    }
}
