package io.continuum.broker.h2;

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
 * The HPACK decoder of one connection's inbound direction (RFC 7541): Helidon's, with its dynamic table and Huffman
 * decoder. It belongs to a {@link FrameReader}, which uses it from one thread, in wire order (HPACK state is per
 * direction and order matters). {@link HpackEncoder} is the other direction.
 */
final class HpackDecoder {
    /** RFC 9113 section 6.5.2: SETTINGS_HEADER_TABLE_SIZE starts at 4,096. */
    static final long DEFAULT_TABLE_SIZE = 4_096;

    /** The decoder's table: the peer's encoder adds to it, SETTINGS_HEADER_TABLE_SIZE (ours) bounds it. */
    private final Http2Headers.DynamicTable table = Http2Headers.DynamicTable.create(DEFAULT_TABLE_SIZE);
    private final Http2HuffmanDecoder huffmanDecoder = Http2HuffmanDecoder.create();

    /** The table size the peer's encoder last announced (or the initial one); only block starts change it. */
    private long tableSize = DEFAULT_TABLE_SIZE;
    /** Whether the next block must begin with a dynamic table size update (our limit went below the table). */
    private boolean sizeUpdateDue;

    /** Our SETTINGS_HEADER_TABLE_SIZE, acknowledged: see {@link FrameReader#headerTableSize(long)}. */
    void tableSizeLimit(long bytes) {
        if (bytes < 0 || bytes > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("SETTINGS_HEADER_TABLE_SIZE out of range: " + bytes);
        }
        table.protocolMaxTableSize(bytes);
        sizeUpdateDue = bytes < tableSize;
    }

    /** Decodes one whole header block (HEADERS and its CONTINUATIONs, padding and priority removed). */
    List<HeaderField> decode(int streamId, byte[] block) throws Http2Error {
        boolean announced = followSizeUpdates(block);
        if (sizeUpdateDue) {
            if (!announced) {
                throw new Http2Error.ConnectionError(Http2ErrorCode.COMPRESSION, "header block of stream " + streamId
                        + " does not begin with the dynamic table size update a lowered"
                        + " SETTINGS_HEADER_TABLE_SIZE requires (RFC 7541 section 4.2)");
            }
            sizeUpdateDue = false;
        }
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
                // Helidon marks a field that came as a never-indexed literal sensitive (RFC 7541 section 6.2.3)
                fields.add(new HeaderField(h.name().toLowerCase(), v, h.sensitive()));
            }
        }
        return fields;
    }

    /**
     * Notes the dynamic table size updates a block begins with (RFC 7541 section 6.3: {@code 001} and a 5-bit prefix
     * integer); Helidon's decoder applies them and checks each against our limit.
     *
     * @return whether there was one
     */
    private boolean followSizeUpdates(byte[] block) {
        boolean any = false;
        int i = 0;
        while (i < block.length && (block[i] & 0xE0) == 0x20) {
            long value = block[i++] & 0x1F;
            if (value == 0x1F) {
                int shift = 0;
                int b;
                do {
                    if (i == block.length || shift > 28) {
                        return any; // truncated or too large: Helidon's decoder reports it
                    }
                    b = block[i++] & 0xFF;
                    value += (long) (b & 0x7F) << shift;
                    shift += 7;
                } while ((b & 0x80) != 0);
            }
            tableSize = value;
            any = true;
        }
        return any;
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
