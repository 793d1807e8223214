/**
 * One HTTP/2 frame codec (RFC 9113) for every party of this project that speaks HTTP/2 frames by hand: a
 * {@link io.continuum.broker.h2.FrameReader} that parses each inbound byte once and hands whole frames to one
 * {@link io.continuum.broker.h2.FrameHandler}, and a {@link io.continuum.broker.h2.FrameWriter} that owns HPACK
 * encoding and frame splitting. HPACK decoding is the codec's own (only Huffman is Helidon's, {@code io.helidon.http.http2});
 * the encoder is the codec's own (see {@code HpackEncoder} for why). No threads, no sockets: it reads and writes
 * the streams it is given.
 */
module io.continuum.broker.h2 {
    requires io.helidon.http.http2;
    requires io.helidon.common.buffers;

    exports io.continuum.broker.h2;
}
