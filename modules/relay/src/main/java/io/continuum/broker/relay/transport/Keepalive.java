package io.continuum.broker.relay.transport;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

/**
 * A connection's liveness check: a PING every {@code keepaliveInterval}; no ACK within {@code keepaliveTimeout}
 * declares the connection dead (a peer that vanished without FIN or reset is otherwise never noticed). State is
 * guarded by the connection's lock.
 */
final class Keepalive {
    private final ReentrantLock lock;
    /** Lock held: why the connection ended, or null while it is open. */
    private final Supplier<ConnectionLostException> failureLocked;
    /** Writes a PING (not an ACK) with this payload; may block on the socket. */
    private final LongConsumer writePing;
    /** Declares the connection dead, KEEPALIVE_TIMEOUT, with this detail. */
    private final Consumer<String> timedOut;
    private final Condition wake;
    private final TransportSettings settings;
    // guarded by lock
    private final Set<Long> outstanding = new HashSet<>();
    private long sequence;
    private volatile Thread thread;

    /**
     * @param lock          the lock that guards the connection's state (the keepalive's too)
     * @param failureLocked lock held: why the connection ended, or null while it is open
     * @param writePing     writes a PING (not an ACK) with the given payload
     * @param timedOut      declares the connection dead (no acknowledgement in time), with a detail
     * @param settings      the interval and the timeout
     */
    Keepalive(ReentrantLock lock, Supplier<ConnectionLostException> failureLocked, LongConsumer writePing,
            Consumer<String> timedOut, TransportSettings settings) {
        this.lock = lock;
        this.failureLocked = failureLocked;
        this.writePing = writePing;
        this.timedOut = timedOut;
        this.wake = lock.newCondition();
        this.settings = settings;
    }

    void start(String name) {
        thread = Thread.ofVirtual().name(name).start(this::loop);
    }

    /** The connection died: wakes every wait; the loop ends. */
    void stop() {
        lock.lock();
        try {
            wake.signalAll();
        } finally {
            lock.unlock();
        }
        Thread t = thread;
        if (t != null && t != Thread.currentThread()) {
            t.interrupt();
        }
    }

    /** A PING ACK arrived (reader thread). */
    void acknowledged(long opaque) {
        lock.lock();
        try {
            if (outstanding.remove(opaque)) {
                wake.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends a PING and waits for its acknowledgement: a round trip through the peer's frame processing.
     *
     * @return whether the ACK arrived within {@code timeout}
     */
    boolean ping(Duration timeout) throws InterruptedException {
        long id;
        lock.lock();
        try {
            if (failureLocked.get() != null) {
                return false;
            }
            id = ++sequence;
            outstanding.add(id);
        } finally {
            lock.unlock();
        }
        long pingId = id;
        // written by a short-lived thread: a socket write blocked by a dead peer must not stop the deadline below
        Thread.ofVirtual().name("bus-ping").start(() -> {
            try {
                writePing.accept(pingId);
            } catch (UncheckedIOException e) {
                // the connection is failing already
            }
        });
        long nanos = timeout.toNanos();
        lock.lock();
        try {
            while (outstanding.contains(pingId) && failureLocked.get() == null) {
                if (nanos <= 0) {
                    outstanding.remove(pingId);
                    return false;
                }
                nanos = wake.awaitNanos(nanos);
            }
            return failureLocked.get() == null;
        } finally {
            lock.unlock();
        }
    }

    private void loop() {
        try {
            while (true) {
                lock.lock();
                try {
                    long nanos = settings.keepaliveInterval().toNanos();
                    while (failureLocked.get() == null && nanos > 0) {
                        nanos = wake.awaitNanos(nanos);
                    }
                    if (failureLocked.get() != null) {
                        return;
                    }
                } finally {
                    lock.unlock();
                }
                if (!ping(settings.keepaliveTimeout())) {
                    timedOut.accept("no PING acknowledgement within " + settings.keepaliveTimeout().toMillis() + " ms");
                    return;
                }
            }
        } catch (InterruptedException e) {
            // closing
        }
    }
}
