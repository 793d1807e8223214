package io.continuum.broker.metadata.watch;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.internal.Catalog;

/**
 * What the namespaces' threads publish and every reader sees: the catalog's current snapshot, whether
 * every namespace has committed its first list (before that, no answer is trusted: R-BEH 1), and the
 * listeners told after each change. Readers never lock: the snapshot is one volatile read and
 * {@code synced} another.
 */
final class ViewState {
    private static final EventLog LOG = EventLog.of(MetadataWatcher.class);

    private final Catalog catalog;
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private final AtomicInteger unsynced;
    private final CountDownLatch syncedLatch = new CountDownLatch(1);
    private volatile boolean synced;

    ViewState(Catalog catalog, int namespaces) {
        this.catalog = catalog;
        this.unsynced = new AtomicInteger(namespaces);
    }

    Catalog catalog() {
        return catalog;
    }

    boolean isSynced() {
        return synced;
    }

    boolean awaitSynced(Duration timeout) throws InterruptedException {
        return syncedLatch.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    Advertisement check(PublisherKey key) {
        Objects.requireNonNull(key, "key");
        if (!synced) {
            return Advertisement.NOT_SYNCED;
        }
        return catalog.snapshot().advertises(key) ? Advertisement.ADVERTISED : Advertisement.NOT_ADVERTISED;
    }

    AutoCloseable onChange(Runnable listener) {
        Objects.requireNonNull(listener, "listener");
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /** A namespace committed its first list; called once per namespace. The last one makes the view synced. */
    void firstListCommitted() {
        if (unsynced.decrementAndGet() == 0) {
            synced = true;
            syncedLatch.countDown();
        }
    }

    /** Tells every listener that the snapshot changed; a listener that throws does not stop the others. */
    void changed() {
        for (Runnable l : listeners) {
            try {
                l.run();
            } catch (RuntimeException e) {
                LOG.warn("metadata_listener_failed").cause(e).log();
            }
        }
    }
}
