package io.continuum.broker.h2;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;

/**
 * The HPACK encoder of one connection's outbound direction (RFC 7541), with its own model of the peer's dynamic
 * table. A field equal to an entry of the static or dynamic table goes as an index; any other regular field as a
 * literal with incremental indexing (so repeated fields of later blocks are one byte each); a sensitive field as a
 * never-indexed literal; a pseudo-header field that is not in the static table, or an entry larger than the whole
 * table, as a literal without indexing. Strings are not Huffman-coded: what a test reads in a capture is the text.
 * <p>
 * Two rules keep a peer whose decoder is Helidon 4.5.0's (a Helidon server) safe: no entry larger than the table
 * is ever added (that decoder's table loops forever on one), and pseudo-header names always go by static index (it
 * refuses them as new names).
 * <p>
 * It belongs to a {@link Http2Writer}, which calls it under its lock in write order.
 */
final class HpackEncoder {
    /** RFC 9113 section 6.5.2: SETTINGS_HEADER_TABLE_SIZE starts at 4,096; more than that is not used. */
    static final int DEFAULT_TABLE_SIZE = 4_096;

    /** The peer's dynamic table as this encoder filled it, newest first (index 62 is the first). */
    private final ArrayDeque<HeaderField> table = new ArrayDeque<>();
    private int tableBytes;
    private int maxTableBytes = DEFAULT_TABLE_SIZE;
    /** Size updates owed at the start of the next block (section 4.2): the smallest since the last, then the last. */
    private int smallestPending = -1;
    private int lastPending = -1;

    /**
     * The peer's SETTINGS_HEADER_TABLE_SIZE: the table this encoder uses is at most that (and at most 4,096),
     * announced at the start of the next block.
     */
    void peerTableSize(long size) {
        int max = (int) Math.min(size, DEFAULT_TABLE_SIZE);
        if (max == maxTableBytes && smallestPending < 0) {
            return;
        }
        smallestPending = smallestPending < 0 ? max : Math.min(smallestPending, max);
        lastPending = max;
        maxTableBytes = max;
        evictTo(max);
    }

    /** Encodes one header block, fields in the order given. */
    byte[] encode(List<HeaderField> fields) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 + fields.size() * 32);
        if (smallestPending >= 0) {
            writeInteger(out, 0x20, 5, smallestPending); // Dynamic Table Size Update (section 6.3)
            if (lastPending != smallestPending) {
                writeInteger(out, 0x20, 5, lastPending);
            }
            smallestPending = -1;
            lastPending = -1;
        }
        for (HeaderField f : fields) {
            encode(out, f);
        }
        return out.toByteArray();
    }

    private void encode(ByteArrayOutputStream out, HeaderField f) {
        if (!f.sensitive()) {
            int index = StaticTable.indexOf(f.name(), f.value());
            if (index == 0) {
                index = dynamicIndexOf(f);
            }
            if (index > 0) {
                writeInteger(out, 0x80, 7, index); // Indexed Header Field (section 6.1)
                return;
            }
        }
        int nameIndex = StaticTable.indexOfName(f.name());
        if (nameIndex == 0 && !f.pseudo()) {
            nameIndex = dynamicIndexOfName(f.name());
        }
        if (f.sensitive()) {
            literal(out, 0x10, 4, nameIndex, f); // Never Indexed (section 6.2.3)
        } else if (f.pseudo() || f.entrySize() > maxTableBytes) {
            literal(out, 0x00, 4, nameIndex, f); // Without Indexing (section 6.2.2)
        } else {
            literal(out, 0x40, 6, nameIndex, f); // With Incremental Indexing (section 6.2.1)
            evictTo(maxTableBytes - f.entrySize());
            table.addFirst(f);
            tableBytes += f.entrySize();
        }
    }

    private static void literal(ByteArrayOutputStream out, int flags, int prefixBits, int nameIndex, HeaderField f) {
        writeInteger(out, flags, prefixBits, nameIndex);
        if (nameIndex == 0) {
            writeString(out, f.name());
        }
        writeString(out, f.value());
    }

    private int dynamicIndexOf(HeaderField f) {
        int i = StaticTable.SIZE + 1;
        for (HeaderField e : table) {
            if (e.name().equals(f.name()) && e.value().equals(f.value())) {
                return i;
            }
            i++;
        }
        return 0;
    }

    private int dynamicIndexOfName(String name) {
        int i = StaticTable.SIZE + 1;
        for (HeaderField e : table) {
            if (e.name().equals(name)) {
                return i;
            }
            i++;
        }
        return 0;
    }

    /** Evicts the oldest entries until the table holds at most {@code bytes} (section 4.4). */
    private void evictTo(int bytes) {
        Iterator<HeaderField> oldest = table.descendingIterator();
        while (tableBytes > Math.max(bytes, 0) && oldest.hasNext()) {
            tableBytes -= oldest.next().entrySize();
            oldest.remove();
        }
    }

    /** A string literal without Huffman coding: its length as a 7-bit prefix integer, then its octets. */
    private static void writeString(ByteArrayOutputStream out, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.ISO_8859_1);
        writeInteger(out, 0x00, 7, bytes.length);
        out.writeBytes(bytes);
    }

    /** Section 5.1: an integer with an N-bit prefix, after the bits {@code flags} sets above it. */
    private static void writeInteger(ByteArrayOutputStream out, int flags, int prefixBits, long value) {
        int max = (1 << prefixBits) - 1;
        if (value < max) {
            out.write(flags | (int) value);
            return;
        }
        out.write(flags | max);
        long rest = value - max;
        while (rest >= 128) {
            out.write((int) (rest % 128 + 128));
            rest /= 128;
        }
        out.write((int) rest);
    }
}
