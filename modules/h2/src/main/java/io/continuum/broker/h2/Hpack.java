package io.continuum.broker.h2;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.helidon.common.buffers.BufferData;
import io.helidon.http.Header;
import io.helidon.http.Headers;
import io.helidon.http.http2.Http2ErrorCode;
import io.helidon.http.http2.Http2Exception;
import io.helidon.http.http2.Http2Flag;
import io.helidon.http.http2.Http2FrameData;
import io.helidon.http.http2.Http2FrameHeader;
import io.helidon.http.http2.Http2FrameTypes;
import io.helidon.http.http2.Http2Headers;
import io.helidon.http.http2.Http2HuffmanDecoder;
import io.helidon.http.http2.Http2Priority;
import io.helidon.http.http2.Http2RstStream;
import io.helidon.http.http2.Http2Stream;
import io.helidon.http.http2.Http2StreamState;
import io.helidon.http.http2.Http2WindowUpdate;
import io.helidon.http.http2.StreamFlowControl;

/**
 * One side's HPACK context (RFC 7541). Decoding is Helidon's coder, with its dynamic table and Huffman decoder;
 * encoding is literal (see {@link #encode}). A decoder belongs to a {@link FrameReader}, an encoder to a
 * {@link FrameWriter}; each is used by one thread at a time, as HPACK state is per direction and order matters.
 */
final class Hpack {
    /** RFC 9113 section 6.5.2: SETTINGS_HEADER_TABLE_SIZE starts at 4,096. */
    static final long DEFAULT_TABLE_SIZE = 4_096;

    /** The decoder's table: the peer's encoder adds to it, SETTINGS_HEADER_TABLE_SIZE (ours) bounds it. */
    private final Http2Headers.DynamicTable table = Http2Headers.DynamicTable.create(DEFAULT_TABLE_SIZE);
    private final Http2HuffmanDecoder huffmanDecoder = Http2HuffmanDecoder.create();
    /** The encoder's first block, and one after a peer's SETTINGS_HEADER_TABLE_SIZE, start with a size update. */
    private boolean first = true;
    private boolean sizeUpdatePending;

    /** Decodes one whole header block (HEADERS and its CONTINUATIONs, padding and priority removed). */
    List<HeaderField> decode(int streamId, byte[] block) throws Http2Error {
        Http2FrameHeader header = Http2FrameHeader.create(block.length, Http2FrameTypes.HEADERS,
                Http2Flag.HeaderFlags.create(Http2Flag.END_OF_HEADERS), streamId);
        Http2Headers decoded;
        try {
            decoded = Http2Headers.create(new DecodingStream(streamId), table, huffmanDecoder,
                    new Http2FrameData(header, BufferData.create(block)));
        } catch (Http2Exception e) {
            // The table may be half updated: HPACK state is the connection's, so is the error (RFC 9113 4.3).
            throw new Http2Error.ConnectionError(Http2ErrorCode.COMPRESSION,
                    "header block of stream " + streamId + ": " + e.getMessage());
        } catch (RuntimeException e) {
            throw new Http2Error.ConnectionError(Http2ErrorCode.COMPRESSION,
                    "header block of stream " + streamId + " cannot be decoded: " + e);
        }
        List<HeaderField> fields = new ArrayList<>();
        addPseudo(fields, ":method", () -> decoded.method().text());
        addPseudo(fields, ":scheme", decoded::scheme);
        addPseudo(fields, ":authority", decoded::authority);
        addPseudo(fields, ":path", decoded::path);
        addPseudo(fields, ":status", () -> String.valueOf(decoded.status().code()));
        Headers regular = decoded.httpHeaders();
        for (Header h : regular) {
            for (String v : h.allValues()) {
                fields.add(new HeaderField(h.name().toLowerCase(), v));
            }
        }
        return fields;
    }

    /**
     * The peer's SETTINGS_HEADER_TABLE_SIZE. The encoder never adds to the peer's table (below), so any size is
     * honoured; the next block starts with a size update to 0 all the same (RFC 7541 section 4.2), so the peer's
     * table holds nothing of ours whatever it allowed.
     */
    void peerTableSizeChanged() {
        sizeUpdatePending = true;
    }

    /**
     * Encodes one header block, fields in the order given, each a literal without indexing and without Huffman
     * coding (RFC 7541 section 6.2.2): valid under any table size the peer sets, and what a test reads in a capture.
     * Not Helidon's encoder: in 4.5.0 its dynamic table loops forever adding an entry larger than the table (a
     * peer's SETTINGS_HEADER_TABLE_SIZE of 0 is enough), and cannot be shrunk from outside its package.
     */
    byte[] encode(List<HeaderField> fields) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 + fields.size() * 32);
        if (sizeUpdatePending || first) {
            out.write(0x20); // Dynamic Table Size Update to 0 (section 6.3)
            sizeUpdatePending = false;
            first = false;
        }
        for (HeaderField f : fields) {
            int nameIndex = staticNameIndex(f.name());
            if (nameIndex > 0) {
                writeInteger(out, 0x00, 4, nameIndex); // literal without indexing, name from the static table
            } else {
                out.write(0x00); // literal without indexing, new name
                writeString(out, f.name());
            }
            writeString(out, f.value());
        }
        return out.toByteArray();
    }

    /**
     * The static table's index of a pseudo-header field's name (RFC 7541 Appendix A), 0 for other names. Pseudo
     * names go by index: Helidon's decoder (the broker's) refuses them as new names.
     */
    private static int staticNameIndex(String name) {
        return switch (name) {
            case ":authority" -> 1;
            case ":method" -> 2;
            case ":path" -> 4;
            case ":scheme" -> 6;
            case ":status" -> 8;
            default -> 0;
        };
    }

    /** A string literal without Huffman coding: its length as a 7-bit prefix integer, then its octets. */
    private static void writeString(ByteArrayOutputStream out, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.ISO_8859_1);
        writeInteger(out, 0x00, 7, bytes.length);
        out.writeBytes(bytes);
    }

    /** RFC 7541 section 5.1: an integer with an N-bit prefix, after the bits {@code flags} sets above it. */
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

    private interface Value {
        String get();
    }

    private static void addPseudo(List<HeaderField> fields, String name, Value value) {
        String v;
        try {
            v = value.get();
        } catch (RuntimeException e) {
            return; // absent
        }
        if (v != null) {
            fields.add(new HeaderField(name, v));
        }
    }

    /** The stream Helidon's decoder names in its errors: nothing else of it is used. */
    private record DecodingStream(int streamId) implements Http2Stream {
        @Override
        public boolean rstStream(Http2RstStream rstStream) {
            return false;
        }

        @Override
        public void windowUpdate(Http2WindowUpdate windowUpdate) {
        }

        @Override
        public void headers(Http2Headers headers, boolean endOfStream) {
        }

        @Override
        public void data(Http2FrameHeader header, BufferData data, boolean endOfStream) {
        }

        @Override
        public void priority(Http2Priority http2Priority) {
        }

        @Override
        public Http2StreamState streamState() {
            return Http2StreamState.OPEN;
        }

        @Override
        public StreamFlowControl flowControl() {
            throw new UnsupportedOperationException("no flow control while decoding headers");
        }
    }
}
