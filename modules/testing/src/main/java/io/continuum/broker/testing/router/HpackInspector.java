package io.continuum.broker.testing.router;

import java.util.ArrayList;
import java.util.List;

import io.helidon.common.buffers.BufferData;
import io.helidon.http.http2.Http2HuffmanDecoder;

/**
 * Decodes HPACK header blocks (RFC 7541) the way a peer sees them, keeping the representation of every field,
 * so tests can check how a client encoded a header (e.g. {@code authorization} never-indexed). One inspector per
 * connection: it tracks the dynamic table across blocks.
 */
public final class HpackInspector {
    /** How a field was represented on the wire. */
    public enum Representation {
        /** Indexed field (static or dynamic table). */
        INDEXED,
        /** Literal with incremental indexing: the value entered the dynamic table. */
        INCREMENTAL,
        /** Literal without indexing. */
        WITHOUT_INDEXING,
        /** Literal never indexed: intermediaries must not index it either. */
        NEVER_INDEXED
    }

    /**
     * One decoded field.
     */
    public record Field(String name, String value, Representation representation) {
        @Override
        public String toString() {
            return name + " (" + representation + ")";
        }
    }

    private static final String[][] STATIC = {
        {":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"}, {":path", "/index.html"},
        {":scheme", "http"}, {":scheme", "https"}, {":status", "200"}, {":status", "204"}, {":status", "206"},
        {":status", "304"}, {":status", "400"}, {":status", "404"}, {":status", "500"}, {"accept-charset", ""},
        {"accept-encoding", "gzip, deflate"}, {"accept-language", ""}, {"accept-ranges", ""}, {"accept", ""},
        {"access-control-allow-origin", ""}, {"age", ""}, {"allow", ""}, {"authorization", ""},
        {"cache-control", ""}, {"content-disposition", ""}, {"content-encoding", ""}, {"content-language", ""},
        {"content-length", ""}, {"content-location", ""}, {"content-range", ""}, {"content-type", ""},
        {"cookie", ""}, {"date", ""}, {"etag", ""}, {"expect", ""}, {"expires", ""}, {"from", ""}, {"host", ""},
        {"if-match", ""}, {"if-modified-since", ""}, {"if-none-match", ""}, {"if-range", ""},
        {"if-unmodified-since", ""}, {"last-modified", ""}, {"link", ""}, {"location", ""}, {"max-forwards", ""},
        {"proxy-authenticate", ""}, {"proxy-authorization", ""}, {"range", ""}, {"referer", ""}, {"refresh", ""},
        {"retry-after", ""}, {"server", ""}, {"set-cookie", ""}, {"strict-transport-security", ""},
        {"transfer-encoding", ""}, {"user-agent", ""}, {"vary", ""}, {"via", ""}, {"www-authenticate", ""}
    };

    private final List<String[]> dynamic = new ArrayList<>(); // newest first
    private final Http2HuffmanDecoder huffman = Http2HuffmanDecoder.create();

    /**
     * @param block a complete header block fragment (HEADERS payload without padding/priority)
     * @return its fields in order
     */
    public List<Field> decode(byte[] block) {
        List<Field> fields = new ArrayList<>();
        int[] pos = {0};
        while (pos[0] < block.length) {
            int b = block[pos[0]] & 0xFF;
            if ((b & 0x80) != 0) {
                String[] entry = entry(readInt(block, pos, 7));
                fields.add(new Field(entry[0], entry[1], Representation.INDEXED));
            } else if ((b & 0xC0) == 0x40) {
                Field f = literal(block, pos, 6, Representation.INCREMENTAL);
                dynamic.addFirst(new String[] {f.name(), f.value()});
                fields.add(f);
            } else if ((b & 0xE0) == 0x20) {
                readInt(block, pos, 5); // dynamic table size update: tests never shrink the table
            } else if ((b & 0xF0) == 0x10) {
                fields.add(literal(block, pos, 4, Representation.NEVER_INDEXED));
            } else {
                fields.add(literal(block, pos, 4, Representation.WITHOUT_INDEXING));
            }
        }
        return fields;
    }

    private Field literal(byte[] block, int[] pos, int prefix, Representation representation) {
        int index = readInt(block, pos, prefix);
        String name = index == 0 ? readString(block, pos) : entry(index)[0];
        String value = readString(block, pos);
        return new Field(name, value, representation);
    }

    private String[] entry(int index) {
        if (index >= 1 && index <= STATIC.length) {
            return STATIC[index - 1];
        }
        int d = index - STATIC.length - 1;
        if (d < 0 || d >= dynamic.size()) {
            throw new IllegalArgumentException("HPACK index out of range: " + index);
        }
        return dynamic.get(d);
    }

    private String readString(byte[] block, int[] pos) {
        boolean huffmanCoded = (block[pos[0]] & 0x80) != 0;
        int length = readInt(block, pos, 7);
        String s;
        if (huffmanCoded) {
            s = huffman.decodeString(BufferData.create(block, pos[0], length), length);
        } else {
            s = new String(block, pos[0], length, java.nio.charset.StandardCharsets.ISO_8859_1);
        }
        pos[0] += length;
        return s;
    }

    private static int readInt(byte[] block, int[] pos, int prefixBits) {
        int max = (1 << prefixBits) - 1;
        int value = block[pos[0]++] & max;
        if (value < max) {
            return value;
        }
        int shift = 0;
        int b;
        do {
            b = block[pos[0]++] & 0xFF;
            value += (b & 0x7F) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        return value;
    }
}
