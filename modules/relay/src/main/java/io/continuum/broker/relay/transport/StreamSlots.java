package io.continuum.broker.relay.transport;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Stream slots under the peer's SETTINGS_MAX_CONCURRENT_STREAMS and the local cap. The limit follows every
 * SETTINGS frame; a lowered limit only delays new streams until enough old ones end.
 */
final class StreamSlots {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition freed = lock.newCondition();
    private long limit = Long.MAX_VALUE; // RFC 9113: unlimited until the peer says otherwise
    private final long localCap;

    /**
     * @param localCap the most streams this side opens at once, below whatever the peer allows
     */
    StreamSlots(long localCap) {
        this.localCap = localCap;
    }
    private long inUse;
    /** {@link #inUse} as of its last change, readable without the lock (a hint for the frame writer). */
    private volatile long inUseNow;
    private long waiting;
    private ConnectionLostException failure;
    /** Set by the peer's graceful GOAWAY: no new slot is granted, the slots in use run on. */
    private ConnectionLostException refusal;
    private final Condition emptied = lock.newCondition();

    /**
     * @param timeout how long to wait
     * @throws SlotTimeoutException    when no slot frees up in time
     * @throws ConnectionLostException when the connection dies while waiting
     */
    void acquire(Duration timeout) throws SlotTimeoutException, ConnectionLostException {
        long nanos = timeout.toNanos();
        lock.lock();
        try {
            while (true) {
                if (failure != null) {
                    throw failure;
                }
                if (refusal != null) {
                    throw refusal;
                }
                if (inUse < Math.min(limit, localCap)) {
                    inUse++;
                    inUseNow = inUse;
                    return;
                }
                if (nanos <= 0) {
                    throw new SlotTimeoutException("no HTTP/2 stream slot within " + timeout.toMillis() + " ms ("
                            + inUse + " streams open, peer allows " + limit + ")");
                }
                waiting++;
                try {
                    nanos = freed.awaitNanos(nanos);
                } finally {
                    waiting--;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SlotTimeoutException("interrupted while waiting for an HTTP/2 stream slot");
        } finally {
            lock.unlock();
        }
    }

    void release() {
        lock.lock();
        try {
            if (inUse > 0) {
                inUse--;
                inUseNow = inUse;
            }
            freed.signal();
            if (inUse == 0) {
                emptied.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    void limit(long newLimit) {
        lock.lock();
        try {
            limit = newLimit;
            freed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void fail(ConnectionLostException cause) {
        lock.lock();
        try {
            failure = cause;
            freed.signalAll();
            emptied.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** No new slot from now on: waiting and later {@link #acquire} calls throw {@code cause}; slots in use run on. */
    void refuseNew(ConnectionLostException cause) {
        lock.lock();
        try {
            refusal = cause;
            freed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until no slot is in use, or the connection failed.
     *
     * @return true when the last slot was given back, false when the connection failed first
     */
    boolean awaitNoneInUse() throws InterruptedException {
        lock.lock();
        try {
            while (inUse > 0 && failure == null) {
                emptied.await();
            }
            return failure == null;
        } finally {
            lock.unlock();
        }
    }

    /** @return slots in use as of the last acquire or release, without taking the lock (may be a moment old) */
    long inUseNow() {
        return inUseNow;
    }

    long inUse() {
        lock.lock();
        try {
            return inUse;
        } finally {
            lock.unlock();
        }
    }

    /** @return callers parked waiting for a slot (for tests) */
    long waiting() {
        lock.lock();
        try {
            return waiting;
        } finally {
            lock.unlock();
        }
    }

    long limit() {
        lock.lock();
        try {
            return limit;
        } finally {
            lock.unlock();
        }
    }

    static long toNanos(Duration d) {
        return TimeUnit.NANOSECONDS.convert(d);
    }
}
