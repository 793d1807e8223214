package io.continuum.broker.metadata.internal;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * An immutable hash map split into 64 shards, so that an edit copies only the shards it touches
 * (a watch event costs a few small copies, not a copy of 65,536 entries) while lookups stay O(1) and
 * lock-free. Instances are never mutated after {@link Editor#build()}.
 */
public final class ShardedMap<K, V> {
    private static final int SHARD_BITS = 6;
    private static final int SHARDS = 1 << SHARD_BITS;
    private static final ShardedMap<?, ?> EMPTY = new ShardedMap<>(emptyShards(), 0);

    private final Map<K, V>[] shards;
    private final int size;

    private ShardedMap(Map<K, V>[] shards, int size) {
        this.shards = shards;
        this.size = size;
    }

    @SuppressWarnings("unchecked")
    private static <K, V> Map<K, V>[] emptyShards() {
        Map<K, V>[] shards = (Map<K, V>[]) new Map<?, ?>[SHARDS];
        Arrays.fill(shards, Map.of());
        return shards;
    }

    /**
     * The empty map.
     *
     * @return empty map
     */
    @SuppressWarnings("unchecked")
    public static <K, V> ShardedMap<K, V> empty() {
        return (ShardedMap<K, V>) EMPTY;
    }

    /**
     * The shard: the top 6 bits of the key's hash times the golden ratio. Not the low bits: each shard
     * is a {@link HashMap}, which picks its bucket from the low bits of {@code h ^ (h >>> 16)}; sharding
     * by those same bits left 63 of every 64 buckets of a shard empty, so buckets held dozens of keys
     * and were turned into trees (every lookup and every snapshot edit walked them; see the profile
     * in docs/metadata.md, "Benchmark").
     */
    static int shard(Object key) {
        return (key.hashCode() * 0x9E3779B9) >>> (Integer.SIZE - SHARD_BITS);
    }

    /**
     * Looks a key up.
     *
     * @return value or null
     */
    public V get(Object key) {
        return shards[shard(key)].get(key);
    }

    /**
     * Whether the key is present.
     *
     * @return presence
     */
    public boolean containsKey(Object key) {
        return shards[shard(key)].containsKey(key);
    }

    /**
     * Number of entries.
     *
     * @return size
     */
    public int size() {
        return size;
    }

    /**
     * Visits every entry.
     *
     * @param action visitor
     */
    public void forEach(BiConsumer<? super K, ? super V> action) {
        for (Map<K, V> shard : shards) {
            shard.forEach(action);
        }
    }

    /**
     * Starts an edit of a copy of this map.
     *
     * @return editor
     */
    public Editor<K, V> edit() {
        return new Editor<>(this);
    }

    /**
     * Copy-on-write edit: shards are copied the first time they change.
     */
    public static final class Editor<K, V> {
        private final Map<K, V>[] shards;
        private final boolean[] copied = new boolean[SHARDS];
        private int size;

        private Editor(ShardedMap<K, V> base) {
            this.shards = base.shards.clone();
            this.size = base.size;
        }

        private Map<K, V> writable(Object key) {
            int i = shard(key);
            if (!copied[i]) {
                shards[i] = new HashMap<>(shards[i]);
                copied[i] = true;
            }
            return shards[i];
        }

        /**
         * Current value of a key in the edit.
         *
         * @return value or null
         */
        public V get(Object key) {
            return shards[shard(key)].get(key);
        }

        /**
         * Sets a value.
         */
        public void put(K key, V value) {
            if (writable(key).put(key, value) == null) {
                size++;
            }
        }

        /**
         * Removes a key.
         */
        public void remove(Object key) {
            if (shards[shard(key)].containsKey(key) && writable(key).remove(key) != null) {
                size--;
            }
        }

        /**
         * Current size of the edit.
         *
         * @return size
         */
        public int size() {
            return size;
        }

        /**
         * Finishes the edit; the editor must not be used afterwards.
         *
         * @return the new immutable map
         */
        public ShardedMap<K, V> build() {
            return new ShardedMap<>(shards, size);
        }
    }
}
