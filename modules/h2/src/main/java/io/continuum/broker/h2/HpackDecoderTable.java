package io.continuum.broker.h2;

import java.util.Arrays;

/**
 * The dynamic table of an {@link HpackDecoder} (RFC 7541 sections 2.3.2, 4): entries newest first, each counted as
 * name + value + 32 octets against a maximum size. Adding evicts the oldest entries until the new one fits; an entry
 * larger than the maximum empties the table and is not added (section 4.4). A ring of slots grown on demand: at most
 * {@code maxSize / 32} entries fit, so it never holds more.
 */
final class HpackDecoderTable {
    /** Every entry counts at least this much (section 4.1), which bounds how many a size holds. */
    private static final int ENTRY_OVERHEAD = 32;

    private HeaderField[] ring = new HeaderField[16];
    /** Slot of the newest entry. */
    private int newest;
    private int length;
    private long size;
    private long maxSize;

    HpackDecoderTable(long maxSize) {
        this.maxSize = maxSize;
    }

    /** @return the maximum size in force (the last size update, or the initial one) */
    long maxSize() {
        return maxSize;
    }

    /** @return the entries held */
    int length() {
        return length;
    }

    /** @return the octets the entries count (section 4.1) */
    long size() {
        return size;
    }

    /** A dynamic table size update (section 6.3): evicts until the table fits. */
    void resize(long newMaxSize) {
        maxSize = newMaxSize;
        evictTo(newMaxSize);
    }

    /** Adds {@code field} as the newest entry (section 4.4). */
    void add(HeaderField field) {
        long entrySize = field.entrySize();
        if (entrySize > maxSize) {
            evictTo(0); // not an error: the table ends up empty
            return;
        }
        evictTo(maxSize - entrySize);
        if (length == ring.length) {
            grow();
        }
        newest = (newest - 1 + ring.length) % ring.length;
        ring[newest] = field;
        length++;
        size += entrySize;
    }

    /**
     * @param index 1 for the newest entry (the HPACK index minus the static table's 61)
     * @return the entry, or null when there is none at that index
     */
    HeaderField get(long index) {
        if (index < 1 || index > length) {
            return null;
        }
        return ring[(int) ((newest + index - 1) % ring.length)];
    }

    private void evictTo(long target) {
        while (size > target) { // each pass removes one entry: at most length passes
            int oldest = (newest + length - 1) % ring.length;
            size -= ring[oldest].entrySize();
            ring[oldest] = null;
            length--;
        }
    }

    private void grow() {
        HeaderField[] bigger = new HeaderField[ring.length * 2];
        for (int i = 0; i < length; i++) {
            bigger[i] = ring[(newest + i) % ring.length];
        }
        Arrays.fill(ring, null);
        ring = bigger;
        newest = 0;
    }
}
