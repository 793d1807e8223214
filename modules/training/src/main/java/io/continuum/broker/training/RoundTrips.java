package io.continuum.broker.training;

import java.util.Arrays;

/**
 * The round trips of the {@link Load#ECHO} streams: when each began (nanoseconds after the traffic started) and how
 * long it took, router to publisher and back through the broker. The training run reports their percentiles, and
 * {@code bench/first-traffic.sh} reads them by the second, to see how soon a broker's data path runs compiled.
 * Public but not exported: the bench reads it on the class path.
 */
public final class RoundTrips {
    private long[] at = new long[4_096];
    private long[] nanos = new long[4_096];
    private int size;

    synchronized void add(long atNanos, long roundTripNanos) {
        if (size == at.length) {
            at = Arrays.copyOf(at, size * 2);
            nanos = Arrays.copyOf(nanos, size * 2);
        }
        at[size] = atNanos;
        nanos[size] = roundTripNanos;
        size++;
    }

    synchronized void addAll(RoundTrips other) {
        long[] a;
        long[] n;
        int count;
        synchronized (other) {
            a = Arrays.copyOf(other.at, other.size);
            n = Arrays.copyOf(other.nanos, other.size);
            count = other.size;
        }
        for (int i = 0; i < count; i++) {
            add(a[i], n[i]);
        }
    }

    /**
     * @param fromNanos start of the window, after the traffic started (inclusive)
     * @param toNanos   end of the window (exclusive)
     * @return the round trips that began in the window, in nanoseconds, sorted
     */
    public synchronized long[] inWindow(long fromNanos, long toNanos) {
        long[] out = new long[size];
        int n = 0;
        for (int i = 0; i < size; i++) {
            if (at[i] >= fromNanos && at[i] < toNanos) {
                out[n++] = nanos[i];
            }
        }
        long[] sorted = Arrays.copyOf(out, n);
        Arrays.sort(sorted);
        return sorted;
    }

    /** @return every round trip, in nanoseconds, sorted */
    public long[] all() {
        return inWindow(Long.MIN_VALUE, Long.MAX_VALUE);
    }

    /**
     * @param sorted round trips, sorted
     * @param q      quantile, 0..1
     * @return the nearest-rank quantile, or 0 when there are none
     */
    public static long quantile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }
}
