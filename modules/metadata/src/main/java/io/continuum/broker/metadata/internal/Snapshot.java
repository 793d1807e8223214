package io.continuum.broker.metadata.internal;

import java.util.List;
import java.util.Map;

import io.continuum.broker.metadata.PublisherKey;

/**
 * One immutable state of the view: per watched namespace the held resources (name to advertised
 * publishers), and across all of them the reference count of every advertised publisher. Published as
 * one volatile reference; readers never lock.
 *
 * @param namespaces      watched namespace to what it holds (absent until its first list commits)
 * @param references      advertised publisher to the number of resources advertising it
 * @param totalReferences sum of all reference counts (the 65,536 cap of R-META 3)
 * @param resourceCount   resources held in all namespaces
 */
public record Snapshot(Map<String, Held> namespaces, ShardedMap<PublisherKey, Integer> references,
                       int totalReferences, int resourceCount) {
    /** Nothing held. */
    public static final Snapshot EMPTY = new Snapshot(Map.of(), ShardedMap.empty(), 0, 0);

    /**
     * What one watched namespace holds.
     *
     * @param resources  resource name to its advertised publishers (possibly none)
     * @param references sum of its resources' publisher counts
     */
    public record Held(ShardedMap<String, List<PublisherKey>> resources, int references) {
        /** Nothing. */
        public static final Held NONE = new Held(ShardedMap.empty(), 0);
    }

    /** Copies the (small) namespace map. */
    public Snapshot {
        namespaces = Map.copyOf(namespaces);
    }

    /**
     * O(1) lookup.
     *
     * @return whether some resource advertises it
     */
    public boolean advertises(PublisherKey key) {
        return references.containsKey(key);
    }

    /**
     * Unique advertised publishers.
     *
     * @return count
     */
    public int publisherCount() {
        return references.size();
    }

    /**
     * What a namespace holds.
     *
     * @return its resources, {@link Held#NONE} before its first list
     */
    public Held held(String namespace) {
        return namespaces.getOrDefault(namespace, Held.NONE);
    }
}
