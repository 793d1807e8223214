package io.continuum.broker.metadata.internal;

import java.util.HashSet;
import java.util.Set;

import io.continuum.broker.metadata.PublisherKey;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The snapshot's sharded map: edits copy only touched shards, and the shard choice must not waste the
 * buckets of each shard's HashMap (lookups are on the hot path of every subscribe, R-SEC 3).
 */
class ShardedMapTest {

    @Test
    void keysOfOneShardStillSpreadOverEveryLowBucketOfItsHashMap() {
        // A HashMap picks its bucket from the low bits of h ^ (h >>> 16): inside one shard those bits
        // must still vary, or most buckets stay empty and the rest turn into trees.
        Set<Integer> lowBitsInShardZero = new HashSet<>();
        for (int r = 0; r < 16_384; r++) {
            PublisherKey key = new PublisherKey("dynamo", "10.244." + (r / 250) + "." + (r % 250 + 1), 5_557);
            if (ShardedMap.shard(key) == 0) {
                int h = key.hashCode();
                lowBitsInShardZero.add((h ^ (h >>> 16)) & 63);
            }
        }
        assertEquals(64, lowBitsInShardZero.size(), lowBitsInShardZero.toString());
    }

    @Test
    void anEditLeavesTheOriginalUnchanged() {
        ShardedMap.Editor<String, Integer> e = ShardedMap.<String, Integer>empty().edit();
        for (int i = 0; i < 1_000; i++) {
            e.put("k" + i, i);
        }
        ShardedMap<String, Integer> first = e.build();
        ShardedMap.Editor<String, Integer> second = first.edit();
        second.remove("k1");
        second.put("k2", -2);
        second.put("new", 7);
        ShardedMap<String, Integer> next = second.build();
        assertEquals(1_000, first.size());
        assertEquals(1, first.get("k1"));
        assertEquals(2, first.get("k2"));
        assertTrue(!first.containsKey("new"));
        assertEquals(1_000, next.size());
        assertTrue(!next.containsKey("k1"));
        assertEquals(-2, next.get("k2"));
        assertEquals(7, next.get("new"));
    }
}
