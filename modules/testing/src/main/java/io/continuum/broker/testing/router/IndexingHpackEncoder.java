package io.continuum.broker.testing.router;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import io.continuum.broker.h2.HeaderField;

/**
 * An HPACK encoder (RFC 7541) that indexes every field it has not sent before, large ones included, as Python's
 * {@code hpack} does: a field already in its model of the peer's dynamic table goes as an index, any other as a
 * literal with incremental indexing and a literal name. An entry larger than the table empties the table and is not
 * added (section 4.4), in its model as in a conforming decoder. The static table is used for {@code :status}, as
 * Python's encoder uses it (a router's other fields have no entry worth a table here): a status in it goes as its
 * index, any other as a literal with its name's index. Size updates can be queued for the start of the next block.
 * Not thread-safe: {@link RawH2Peer} calls it under its writer's lock.
 */
final class IndexingHpackEncoder {
    /** RFC 7541 Appendix A: {@code :status} is entries 8 to 14 of the static table. */
    private static final int STATUS_NAME_INDEX = 8;
    private static final Map<String, Integer> STATIC_STATUS = Map.of("200", 8, "204", 9, "206", 10, "304", 11,
            "400", 12, "404", 13, "500", 14);
    private final ArrayDeque<HeaderField> table = new ArrayDeque<>(); // newest first: index 62
    private long tableSize;
    private long maxTableSize = 4_096;
    private final ArrayDeque<Long> pendingSizeUpdates = new ArrayDeque<>();

    /** Queues a dynamic table size update (section 6.3) for the start of the next block. */
    void sizeUpdate(long size) {
        pendingSizeUpdates.add(size);
    }

    byte[] encode(List<HeaderField> fields) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (!pendingSizeUpdates.isEmpty()) {
            long size = pendingSizeUpdates.poll();
            integer(out, 0x20, 5, size);
            maxTableSize = size;
            evictTo(size);
        }
        for (HeaderField field : fields) {
            int index = indexOf(field);
            if (index > 0) {
                integer(out, 0x80, 7, index);
                continue;
            }
            if (field.name().equals(":status")) {
                integer(out, 0x40, 6, STATUS_NAME_INDEX);
            } else {
                integer(out, 0x40, 6, 0);
                string(out, field.name());
            }
            string(out, field.value());
            long size = field.name().length() + field.value().length() + 32L;
            if (size > maxTableSize) {
                evictTo(0);
            } else {
                evictTo(maxTableSize - size);
                table.addFirst(new HeaderField(field.name(), field.value()));
                tableSize += size;
            }
        }
        return out.toByteArray();
    }

    private int indexOf(HeaderField field) {
        if (field.name().equals(":status")) {
            Integer staticIndex = STATIC_STATUS.get(field.value());
            if (staticIndex != null) {
                return staticIndex;
            }
        }
        int index = 62;
        for (HeaderField entry : table) {
            if (entry.name().equals(field.name()) && entry.value().equals(field.value())) {
                return index;
            }
            index++;
        }
        return 0;
    }

    private void evictTo(long target) {
        Iterator<HeaderField> oldestFirst = table.descendingIterator();
        while (tableSize > target && oldestFirst.hasNext()) {
            HeaderField oldest = oldestFirst.next();
            oldestFirst.remove();
            tableSize -= oldest.name().length() + oldest.value().length() + 32L;
        }
    }

    private static void string(ByteArrayOutputStream out, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.ISO_8859_1);
        integer(out, 0x00, 7, bytes.length); // not Huffman-coded
        out.writeBytes(bytes);
    }

    private static void integer(ByteArrayOutputStream out, int pattern, int prefixBits, long value) {
        long max = (1L << prefixBits) - 1;
        if (value < max) {
            out.write((int) (pattern | value));
            return;
        }
        out.write((int) (pattern | max));
        value -= max;
        while (value >= 128) {
            out.write((int) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        out.write((int) value);
    }
}
