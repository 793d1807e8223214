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
                // Helidon marks a field that came as a never-indexed literal sensitive (RFC 7541 section 6.2.3)
                fields.add(new HeaderField(h.name().toLowerCase(), v, h.sensitive()));
            }
        }
        return fields;
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
