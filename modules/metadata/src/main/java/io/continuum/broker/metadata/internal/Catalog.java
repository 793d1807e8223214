package io.continuum.broker.metadata.internal;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

import io.continuum.broker.metadata.MetadataMetrics;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.SkipReason;

/**
 * The writer side of the view: applies listings and watch events to the current {@link Snapshot} and
 * publishes each new one with a single volatile write. Writers (one thread per watched namespace)
 * serialise on a lock; readers call {@link #snapshot()} and never lock. Enforces the resource cap per
 * namespace and the total reference cap (R-META 3, 6), and counts every skip.
 * <p>
 * Namespaces list concurrently (one thread each). The 65,536 cap is shared while paging: every
 * listing in progress reserves the references it has kept so far, and an item only keeps what fits
 * beside what every other namespace claims, that is the larger of what it holds in the snapshot and
 * what its own listing in progress has reserved. So the references kept by all listings in progress
 * never exceed the cap together, and the commit checks the total once more against the snapshot.
 */
public final class Catalog {
    private final Limits limits;
    private final MetadataMetrics metrics;
    private final ReentrantLock writeLock = new ReentrantLock();
    private volatile Snapshot snapshot = Snapshot.EMPTY;
    /** Guards {@link #reserved}, and the publication of a commit with the release of its reservation. */
    private final ReentrantLock budgetLock = new ReentrantLock();
    /** References kept so far by each namespace's listing in progress. */
    private final Map<String, Integer> reserved = new HashMap<>();

    /**
     * Creates an empty catalog.
     *
     * @param limits  caps
     * @param metrics skip counters
     */
    public Catalog(Limits limits, MetadataMetrics metrics) {
        this.limits = Objects.requireNonNull(limits, "limits");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
    }

    /**
     * The current snapshot (lock-free).
     *
     * @return snapshot
     */
    public Snapshot snapshot() {
        return snapshot;
    }

    /**
     * Starts a listing of a namespace; nothing changes until {@link Listing#commit()}.
     *
     * @return listing
     */
    public Listing startListing(String namespace) {
        return new Listing(namespace);
    }

    /**
     * A namespace's resources as a list pass collects them, page after page. Caps are enforced while
     * paging: per resource by the parser, the namespace's resource cap and the total reference cap
     * (against what the other namespaces hold or have reserved now) here, and the total again when
     * committing. A listing that is not committed must be closed, which releases its reservation.
     */
    public final class Listing implements AutoCloseable {
        private final String namespace;
        private final LinkedHashMap<String, List<PublisherKey>> resources = new LinkedHashMap<>();
        private int references;
        private boolean done;

        private Listing(String namespace) {
            this.namespace = namespace;
        }

        /**
         * Adds one parsed list item, counting its skips.
         *
         * @param resource parsed item
         */
        public void add(ParsedResource resource) {
            if (done) {
                throw new IllegalStateException("the listing of " + namespace + " is already committed or closed");
            }
            if (!resource.wellFormed()) {
                count(resource.skips());
                return;
            }
            List<PublisherKey> previous = resources.get(resource.name());
            if (previous == null && resources.size() >= limits.resourcesPerNamespace()) {
                metrics.skipped(SkipReason.RESOURCE_CAP);
                return;
            }
            count(resource.skips());
            if (previous != null) {
                references -= previous.size();
            }
            List<PublisherKey> kept;
            budgetLock.lock();
            try {
                kept = fit(resource.publishers(), limits.totalReferences() - claimedByOthers() - references);
                references += kept.size();
                reserved.put(namespace, references);
            } finally {
                budgetLock.unlock();
            }
            resources.put(resource.name(), kept);
        }

        /** What the other namespaces claim: per namespace, the larger of held and reserved. */
        private int claimedByOthers() {
            Snapshot now = snapshot;
            int others = 0;
            for (Map.Entry<String, Snapshot.Held> e : now.namespaces().entrySet()) {
                if (!e.getKey().equals(namespace)) {
                    others += Math.max(e.getValue().references(), reserved.getOrDefault(e.getKey(), 0));
                }
            }
            for (Map.Entry<String, Integer> e : reserved.entrySet()) {
                if (!e.getKey().equals(namespace) && !now.namespaces().containsKey(e.getKey())) {
                    others += e.getValue();
                }
            }
            return others;
        }

        /**
         * Number of resources collected so far.
         *
         * @return count
         */
        public int size() {
            return resources.size();
        }

        /**
         * Replaces the namespace's part of the snapshot with this listing, atomically (R-META 2).
         *
         * @return the committed snapshot
         */
        public Snapshot commit() {
            writeLock.lock();
            try {
                Snapshot old = snapshot;
                Snapshot.Held oldHeld = old.held(namespace);
                int budget = limits.totalReferences() - (old.totalReferences() - oldHeld.references());
                ShardedMap.Editor<PublisherKey, Integer> refs = old.references().edit();
                oldHeld.resources().forEach((name, publishers) -> release(refs, publishers));
                ShardedMap.Editor<String, List<PublisherKey>> held = ShardedMap.<String, List<PublisherKey>>empty().edit();
                int total = 0;
                for (Map.Entry<String, List<PublisherKey>> e : resources.entrySet()) {
                    // Other namespaces may have grown since this listing was paged: re-check the total.
                    List<PublisherKey> kept = fit(e.getValue(), budget - total);
                    total += kept.size();
                    acquire(refs, kept);
                    held.put(e.getKey(), kept);
                }
                Map<String, Snapshot.Held> namespaces = new HashMap<>(old.namespaces());
                namespaces.put(namespace, new Snapshot.Held(held.build(), total));
                Snapshot next = new Snapshot(namespaces, refs.build(),
                        old.totalReferences() - oldHeld.references() + total,
                        old.resourceCount() - oldHeld.resources().size() + resources.size());
                // Publish and release the reservation at once: another listing never sees this
                // namespace's references both held and reserved, nor neither.
                budgetLock.lock();
                try {
                    snapshot = next;
                    releaseReservation();
                } finally {
                    budgetLock.unlock();
                }
                return next;
            } finally {
                writeLock.unlock();
            }
        }

        /**
         * Abandons the listing if it was not committed (the list pass failed): releases the
         * references it reserved. Idempotent.
         */
        @Override
        public void close() {
            budgetLock.lock();
            try {
                releaseReservation();
            } finally {
                budgetLock.unlock();
            }
        }

        private void releaseReservation() {
            if (!done) {
                done = true;
                reserved.remove(namespace);
            }
        }
    }

    /**
     * Applies an ADDED or MODIFIED watch event. When the update would exceed the total cap, the
     * resource's previous advertisement is removed first (stale addresses deauthorized at once) and
     * only the new publishers that fit are kept (R-META 6).
     *
     * @param namespace watched namespace (its first list must have committed)
     * @param resource  parsed event object
     */
    public void upsert(String namespace, ParsedResource resource) {
        if (!resource.wellFormed()) {
            count(resource.skips());
            return;
        }
        writeLock.lock();
        try {
            Snapshot old = snapshot;
            Snapshot.Held oldHeld = old.held(namespace);
            List<PublisherKey> previous = oldHeld.resources().get(resource.name());
            if (previous == null && oldHeld.resources().size() >= limits.resourcesPerNamespace()) {
                metrics.skipped(SkipReason.RESOURCE_CAP);
                return;
            }
            count(resource.skips());
            int previousSize = previous == null ? 0 : previous.size();
            int budget = limits.totalReferences() - (old.totalReferences() - previousSize);
            List<PublisherKey> kept = fit(resource.publishers(), budget);
            ShardedMap.Editor<PublisherKey, Integer> refs = old.references().edit();
            if (previous != null) {
                release(refs, previous);
            }
            acquire(refs, kept);
            ShardedMap.Editor<String, List<PublisherKey>> held = oldHeld.resources().edit();
            held.put(resource.name(), kept);
            publish(old, namespace, new Snapshot.Held(held.build(), oldHeld.references() - previousSize + kept.size()),
                    refs.build(), kept.size() - previousSize, previous == null ? 1 : 0);
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Applies a DELETED watch event: the resource's publishers stop being advertised at once.
     */
    public void delete(String namespace, String name) {
        writeLock.lock();
        try {
            Snapshot old = snapshot;
            Snapshot.Held oldHeld = old.held(namespace);
            List<PublisherKey> previous = oldHeld.resources().get(name);
            if (previous == null) {
                return;
            }
            ShardedMap.Editor<PublisherKey, Integer> refs = old.references().edit();
            release(refs, previous);
            ShardedMap.Editor<String, List<PublisherKey>> held = oldHeld.resources().edit();
            held.remove(name);
            publish(old, namespace, new Snapshot.Held(held.build(), oldHeld.references() - previous.size()),
                    refs.build(), -previous.size(), -1);
        } finally {
            writeLock.unlock();
        }
    }

    private void publish(Snapshot old, String namespace, Snapshot.Held held, ShardedMap<PublisherKey, Integer> refs,
                         int referenceDelta, int resourceDelta) {
        Map<String, Snapshot.Held> namespaces = new HashMap<>(old.namespaces());
        namespaces.put(namespace, held);
        snapshot = new Snapshot(namespaces, refs, old.totalReferences() + referenceDelta,
                old.resourceCount() + resourceDelta);
    }

    /** The first {@code budget} publishers; the rest counted as {@code total_cap}. */
    private List<PublisherKey> fit(List<PublisherKey> publishers, int budget) {
        int room = Math.max(0, budget);
        if (publishers.size() <= room) {
            return publishers;
        }
        for (int i = room; i < publishers.size(); i++) {
            metrics.skipped(SkipReason.TOTAL_CAP);
        }
        return List.copyOf(publishers.subList(0, room));
    }

    private static void acquire(ShardedMap.Editor<PublisherKey, Integer> refs, List<PublisherKey> publishers) {
        for (PublisherKey key : publishers) {
            Integer n = refs.get(key);
            refs.put(key, n == null ? 1 : n + 1);
        }
    }

    private static void release(ShardedMap.Editor<PublisherKey, Integer> refs, List<PublisherKey> publishers) {
        for (PublisherKey key : publishers) {
            Integer n = refs.get(key);
            if (n == null || n <= 1) {
                refs.remove(key);
            } else {
                refs.put(key, n - 1);
            }
        }
    }

    private void count(Map<SkipReason, Integer> skips) {
        skips.forEach((reason, n) -> {
            for (int i = 0; i < n; i++) {
                metrics.skipped(reason);
            }
        });
    }
}
