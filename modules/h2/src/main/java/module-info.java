/**
 * One HTTP/2 frame codec (RFC 9113) for every party of this project that speaks HTTP/2 frames by hand: a
 * {@link io.continuum.broker.h2.Http2Reader} that parses each inbound byte once and hands whole frames to one
 * {@link io.continuum.broker.h2.FrameHandler}, and a {@link io.continuum.broker.h2.Http2Writer} that owns HPACK
 * encoding and frame splitting, with the protocol's numbers in {@link io.continuum.broker.h2.Http2} and {@link
 * io.continuum.broker.h2.ErrorCode}. HPACK, both ways, is the codec's own; only Huffman decoding is Helidon's, used
 * inside and never in the API, so no module on the codec needs Helidon. No threads, no sockets: it reads and
 * writes the streams it is given.
 */
module io.continuum.broker.h2 {
    requires io.helidon.http.http2;
    requires io.helidon.common.buffers;

    exports io.continuum.broker.h2;
}
