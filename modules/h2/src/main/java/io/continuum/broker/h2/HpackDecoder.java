package io.continuum.broker.h2;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.helidon.common.buffers.BufferData;
import io.helidon.http.http2.Http2HuffmanDecoder;

/**
 * The HPACK decoder of one connection's inbound direction (RFC 7541), with a dynamic table of its own
 * ({@link HpackDecoderTable}); only the Huffman code (section 5.2, Appendix B) is Helidon's. It belongs to a
 * {@link Http2Reader}, which uses it from one thread, in wire order (HPACK state is per direction and order matters).
 * {@link HpackEncoder} is the other direction.
 * <p>
 * An entry larger than the table empties it and is not added (section 4.4), which is not an error: a size update to
 * 0 followed by a field with incremental indexing is legal, as is one such field over 4,064 bytes (Helidon 4.5.0's
 * table loops forever on both, which is why the codec decodes on its own).
 * <p>
 * Bounds, whatever the input: one pass over the block, each byte read once (no loop that does not advance); the
 * table holds at most our SETTINGS_HEADER_TABLE_SIZE; the fields kept are at most the header list limit (RFC 9113
 * section 6.5.2 counts each field as name + value + 32 octets) plus one field. A block that decodes past the limit is
 * still decoded to its end, so that the table stays in step with the peer's encoder, and is reported
 * {@link Block#overLimit()}: a stream error for the caller, not a connection error. Anything that is not valid HPACK
 * is a connection COMPRESSION_ERROR (RFC 9113 section 4.3): the table may be half updated.
 */
final class HpackDecoder {
    /** RFC 9113 section 6.5.2: SETTINGS_HEADER_TABLE_SIZE starts at 4,096. */
    static final long DEFAULT_TABLE_SIZE = 4_096;

    private final HpackDecoderTable table = new HpackDecoderTable(DEFAULT_TABLE_SIZE);
    private final Http2HuffmanDecoder huffman = Http2HuffmanDecoder.create();
    /** Our SETTINGS_HEADER_TABLE_SIZE, acknowledged: the most a size update may announce. */
    private long limit = DEFAULT_TABLE_SIZE;
    /** Whether the next block must begin with a dynamic table size update (our limit went below the table). */
    private boolean sizeUpdateDue;

    /**
     * One decoded header block.
     *
     * @param fields    the fields in wire order; once over the limit, the fields before the one that crossed it
     * @param listSize  the decoded header list size (RFC 9113 section 6.5.2), counted to the end of the block
     * @param overLimit whether {@code listSize} exceeded the limit given to {@link #decode}
     */
    record Block(List<HeaderField> fields, long listSize, boolean overLimit) {
    }

    /** Our SETTINGS_HEADER_TABLE_SIZE, acknowledged: see {@link Http2Reader#headerTableSize(long)}. */
    void tableSizeLimit(long bytes) {
        if (bytes < 0 || bytes > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("SETTINGS_HEADER_TABLE_SIZE out of range: " + bytes);
        }
        limit = bytes;
        if (bytes < table.maxSize()) {
            sizeUpdateDue = true;
        }
    }

    /**
     * Decodes one whole header block (HEADERS and its CONTINUATIONs, padding and priority removed).
     *
     * @param streamId     the stream, for messages
     * @param block        the block
     * @param maxListSize  the header list size past which fields are no longer kept
     */
    Block decode(int streamId, byte[] block, long maxListSize) throws Http2Error {
        Cursor in = new Cursor(streamId, block);
        List<HeaderField> fields = new ArrayList<>();
        long listSize = 0;
        boolean atStart = true;
        while (in.hasMore()) {
            int b = in.peek();
            if ((b & 0xE0) == 0x20) { // 001xxxxx: dynamic table size update (section 6.3)
                if (!atStart) {
                    throw in.error("dynamic table size update after a field (RFC 7541 section 4.2)");
                }
                long size = in.integer(5);
                if (size > limit) {
                    throw in.error("dynamic table size update to " + size + " exceeds SETTINGS_HEADER_TABLE_SIZE "
                            + limit);
                }
                table.resize(size);
                sizeUpdateDue = false;
                continue;
            }
            if (atStart && sizeUpdateDue) {
                throw in.error("block does not begin with the dynamic table size update a lowered"
                        + " SETTINGS_HEADER_TABLE_SIZE requires (RFC 7541 section 4.2)");
            }
            atStart = false;
            HeaderField field;
            if ((b & 0x80) != 0) { // 1xxxxxxx: indexed (section 6.1)
                field = entry(in, in.integer(7));
            } else if ((b & 0x40) != 0) { // 01xxxxxx: literal with incremental indexing (section 6.2.1)
                field = literal(in, 6, false);
                table.add(field);
            } else { // 0000xxxx without indexing, 0001xxxx never indexed (sections 6.2.2, 6.2.3)
                field = literal(in, 4, (b & 0x10) != 0);
            }
            listSize += field.entrySize();
            if (listSize <= maxListSize) {
                fields.add(field);
            }
        }
        if (atStart && sizeUpdateDue) {
            throw in.error("block does not begin with the dynamic table size update a lowered"
                    + " SETTINGS_HEADER_TABLE_SIZE requires (RFC 7541 section 4.2)");
        }
        return new Block(List.copyOf(fields), listSize, listSize > maxListSize);
    }

    private HeaderField entry(Cursor in, long index) throws Http2Error {
        if (index == 0) {
            throw in.error("index 0 (RFC 7541 section 6.1)");
        }
        if (index <= StaticTable.SIZE) {
            return StaticTable.entry((int) index);
        }
        HeaderField field = table.get(index - StaticTable.SIZE);
        if (field == null) {
            throw in.error("index " + index + " is in neither table (dynamic table holds " + table.length()
                    + " entries)");
        }
        return field;
    }

    private HeaderField literal(Cursor in, int prefixBits, boolean neverIndexed) throws Http2Error {
        long nameIndex = in.integer(prefixBits);
        String name = nameIndex == 0 ? string(in) : entry(in, nameIndex).name();
        String value = string(in);
        return new HeaderField(name, value, neverIndexed);
    }

    /** A string literal (section 5.2): H bit, 7-bit prefix length, then that many octets. */
    private String string(Cursor in) throws Http2Error {
        if (!in.hasMore()) {
            throw in.error("the block ends where a string literal should begin");
        }
        boolean huffmanCoded = (in.peek() & 0x80) != 0;
        long length = in.integer(7);
        if (length > in.remaining()) {
            throw in.error("string literal of " + length + " octets, " + in.remaining() + " left in the block");
        }
        int start = in.skip((int) length);
        if (!huffmanCoded) {
            // octets as they are: ISO-8859-1 maps each to one char, so String.length() is the octet count
            return new String(in.block, start, (int) length, StandardCharsets.ISO_8859_1);
        }
        try {
            return huffman.decodeString(BufferData.create(in.block, start, (int) length), (int) length);
        } catch (RuntimeException e) {
            throw in.error("Huffman-coded string cannot be decoded: " + e.getMessage());
        }
    }

    /** The read position in one block. */
    private static final class Cursor {
        private final int streamId;
        private final byte[] block;
        private int position;

        Cursor(int streamId, byte[] block) {
            this.streamId = streamId;
            this.block = block;
        }

        boolean hasMore() {
            return position < block.length;
        }

        int remaining() {
            return block.length - position;
        }

        int peek() {
            return block[position] & 0xFF;
        }

        /** @return where the skipped octets start */
        int skip(int n) {
            int start = position;
            position += n;
            return start;
        }

        /**
         * An integer with an N-bit prefix (section 5.1). Values past 2^32 - 1 are refused: no field, size or index
         * of a bounded block needs one, and the continuation octets stop within 5 of the prefix.
         */
        long integer(int prefixBits) throws Http2Error {
            int mask = (1 << prefixBits) - 1;
            long value = block[position++] & mask;
            if (value < mask) {
                return value;
            }
            int shift = 0;
            while (true) {
                if (shift > 28) {
                    throw error("integer over 2^32 - 1");
                }
                if (!hasMore()) {
                    throw error("integer runs past the end of the block");
                }
                int b = block[position++] & 0xFF;
                value += (long) (b & 0x7F) << shift;
                if (value > 0xFFFF_FFFFL) {
                    throw error("integer over 2^32 - 1");
                }
                if ((b & 0x80) == 0) {
                    return value;
                }
                shift += 7;
            }
        }

        Http2Error error(String message) {
            return new Http2Error.ConnectionError(ErrorCode.COMPRESSION_ERROR, "header block of stream " + streamId
                    + ": " + message);
        }
    }
}
