package io.continuum.broker.event;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Fixed log windows per key, so that a peer cannot fill an operator's disk with one kind of line: the first event of
 * a key after its last window closed opens a new window and is logged; further events of that key inside the
 * window are only counted, and the first line of the next window carries how many were. Thread-safe; the caller
 * keeps its own counters of every event (metrics), this only decides which become lines.
 *
 * @param <K> what a window is per (a code, an event name)
 */
public final class LogWindows<K> {
    /** The answer for an event inside an open window: count it, log nothing. */
    public static final long SUPPRESS = -1;

    private final LongSupplier nanoClock;
    private final long windowNanos;
    private final Map<K, Window> windows = new HashMap<>(); // guarded by this

    private static final class Window {
        long openedNanos;
        long suppressed;
    }

    /**
     * @param nanoClock monotonic clock in nanoseconds
     * @param window    window length, positive
     */
    public LogWindows(LongSupplier nanoClock, Duration window) {
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        if (window.isZero() || window.isNegative()) {
            throw new IllegalArgumentException("window must be positive: " + window);
        }
        this.windowNanos = window.toNanos();
    }

    /**
     * One event of {@code key}.
     *
     * @return {@link #SUPPRESS} when its window is open (log nothing); otherwise it opened a new window: log it,
     *         with the returned count of events suppressed in the window before (a field when above 0)
     */
    public synchronized long admit(K key) {
        Objects.requireNonNull(key, "key");
        long now = nanoClock.getAsLong();
        Window w = windows.get(key);
        if (w == null) {
            w = new Window();
            windows.put(key, w);
        } else if (now - w.openedNanos < windowNanos) {
            w.suppressed++;
            return SUPPRESS;
        }
        long suppressed = w.suppressed;
        w.openedNanos = now;
        w.suppressed = 0;
        return suppressed;
    }
}
