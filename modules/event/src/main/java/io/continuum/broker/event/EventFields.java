package io.continuum.broker.event;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The typed fields of one event, in the order they were added: what {@link EventFormatter} renders after
 * {@code event}. Carried as the single parameter of the event's {@link java.util.logging.LogRecord}, which
 * is how the formatter tells an event from a library's record.
 */
public final class EventFields {
    private final List<Field> list;

    EventFields(List<Field> list) {
        this.list = Collections.unmodifiableList(new ArrayList<>(list));
    }

    /**
     * One field. The value is a {@link String} (possibly null), a {@link Long} or a {@link Boolean}.
     *
     * @param key   key, a lower-case identifier chosen by the code (never from outside)
     * @param value value, possibly from outside: the formatter quotes and escapes it
     */
    public record Field(String key, Object value) {
    }

    /**
     * The fields in order.
     *
     * @return unmodifiable list
     */
    public List<Field> list() {
        return list;
    }

    /**
     * The value of a field, for tests and filters.
     *
     * @return the value, or null when absent (or null)
     */
    public Object get(String key) {
        for (Field f : list) {
            if (f.key().equals(key)) {
                return f.value();
            }
        }
        return null;
    }

    /** The fields as logfmt, rendered by the one formatter (so a handler that prints parameters shows them). */
    @Override
    public String toString() {
        return EventFormatter.logfmt(this);
    }
}
