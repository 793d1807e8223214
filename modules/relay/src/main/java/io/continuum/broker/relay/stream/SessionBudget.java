package io.continuum.broker.relay.stream;

import java.util.concurrent.atomic.AtomicLong;

import io.continuum.broker.relay.api.RelayConfig;

/**
 * The buffer budget all data streams of one session share toward the router (R-BUF 2): 64 MiB by
 * default. Charged and released by {@link ChunkQueue}; lock-free.
 */
public final class SessionBudget {
    /** R-BUF 2: all streams of a session together buffer at most 64 MiB (the spec's value, declared once). */
    public static final long DEFAULT_LIMIT_BYTES = RelayConfig.Timeouts.SPEC.sessionBufferBytes();

    private final long limit;
    private final AtomicLong used = new AtomicLong();

    /**
     * Creates a budget.
     *
     * @param limitBytes bytes all streams together may hold queued
     */
    public SessionBudget(long limitBytes) {
        if (limitBytes <= 0) {
            throw new IllegalArgumentException("limitBytes must be positive: " + limitBytes);
        }
        this.limit = limitBytes;
    }

    /**
     * Charges {@code bytes} if they fit.
     *
     * @param bytes charge (chunk length plus overhead)
     * @return false, and nothing charged, when the charge would exceed the limit
     */
    boolean tryCharge(long bytes) {
        long current;
        do {
            current = used.get();
            if (current + bytes > limit) {
                return false;
            }
        } while (!used.compareAndSet(current, current + bytes));
        return true;
    }

    /**
     * Returns a previous charge.
     *
     * @param bytes charge to return
     */
    void release(long bytes) {
        used.addAndGet(-bytes);
    }

    /**
     * Bytes charged right now.
     *
     * @return bytes queued across the session's streams, overhead included
     */
    public long usedBytes() {
        return used.get();
    }

    /**
     * The limit.
     *
     * @return limit in bytes
     */
    public long limitBytes() {
        return limit;
    }
}
