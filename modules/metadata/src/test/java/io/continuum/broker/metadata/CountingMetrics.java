package io.continuum.broker.metadata;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** Metrics that count, with bounded waits on the counters (no sleeps). */
public final class CountingMetrics implements MetadataMetrics {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Map<SkipReason, Integer> skipped = new EnumMap<>(SkipReason.class);
    private final Map<RestartReason, Integer> restarts = new EnumMap<>(RestartReason.class);

    @Override
    public void skipped(SkipReason reason) {
        lock.lock();
        try {
            skipped.merge(reason, 1, Integer::sum);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void watchRestarted(RestartReason reason) {
        lock.lock();
        try {
            restarts.merge(reason, 1, Integer::sum);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private final java.util.concurrent.atomic.AtomicInteger lists = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public void listed(Duration elapsed) {
        if (elapsed.isNegative()) {
            throw new AssertionError("negative list duration " + elapsed);
        }
        lists.incrementAndGet();
    }

    public int lists() {
        return lists.get();
    }

    public int skipCount(SkipReason reason) {
        lock.lock();
        try {
            return skipped.getOrDefault(reason, 0);
        } finally {
            lock.unlock();
        }
    }

    public Map<SkipReason, Integer> skips() {
        lock.lock();
        try {
            return Map.copyOf(skipped);
        } finally {
            lock.unlock();
        }
    }

    public int restarts(RestartReason reason) {
        lock.lock();
        try {
            return restarts.getOrDefault(reason, 0);
        } finally {
            lock.unlock();
        }
    }

    public Map<RestartReason, Integer> restartCounts() {
        lock.lock();
        try {
            return Map.copyOf(restarts);
        } finally {
            lock.unlock();
        }
    }

    /** Waits until the restart counter for {@code reason} reaches {@code atLeast}. */
    public void awaitRestarts(RestartReason reason, int atLeast, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (restarts.getOrDefault(reason, 0) < atLeast) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("restarts " + reason + " < " + atLeast + " within " + timeout
                            + "; got " + restarts);
                }
                changed.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }
}
