package io.continuum.broker.protocol;

import java.nio.charset.StandardCharsets;

import io.continuum.broker.protocol.FrameType.Direction;

/**
 * Encodes frames to the wire form of bus-protocol-v1.md section 3 (a 4-byte unsigned big-endian
 * length, then that many bytes of UTF-8 JSON with a string member {@code type}) and decodes single
 * payloads. For a byte stream use {@link FrameDecoder}.
 * <p>
 * Both directions are supported: the broker encodes {@link Frame.ClientFrame}s and decodes
 * {@link Frame.RouterFrame}s; the project's test router does the opposite with the same class.
 * Thread-safe and stateless.
 */
public final class FrameCodec {
    /** Size of the length prefix. */
    public static final int LENGTH_PREFIX_BYTES = 4;
    /** Smallest stream id. */
    public static final long MIN_STREAM_ID = 1;
    /** Largest stream id, 2^53-1. */
    public static final long MAX_STREAM_ID = Checks.MAX_STREAM_ID;
    /** Longest {@code message} member, in characters (Unicode code points). */
    public static final int MAX_MESSAGE_CHARS = Checks.MAX_MESSAGE_CHARS;
    /** Longest {@code welcome.session_id}, in characters. */
    public static final int MAX_SESSION_ID_CHARS = Checks.MAX_SESSION_ID_CHARS;

    private FrameCodec() {
    }

    /**
     * Encodes any frame, with its length prefix. {@code message} members are truncated to 256
     * characters; optional members that are absent (null or empty) are left out.
     *
     * @param frame frame to encode
     * @return the frame's bytes: prefix and JSON payload
     * @throws IllegalArgumentException if a value breaks a rule the decoder enforces: a stream id
     *                                  outside 1..2^53-1, a session id that is not 1..128 visible
     *                                  ASCII characters, a negative deadline, a protocol version
     *                                  below 1, a {@code zmq_tcp} target of invalid shape, a
     *                                  {@link Target.Unsupported} target, an {@link Frame.Unknown}
     *                                  with a known type, or a payload over 1 MiB
     */
    public static byte[] encode(Frame frame) {
        return FrameWriter.encode(frame);
    }

    /**
     * Wraps arbitrary JSON text in a length prefix, unchecked. For test peers that must send
     * malformed or unusual frames on purpose.
     *
     * @param json payload text, encoded as UTF-8
     * @return prefix and payload
     * @throws IllegalArgumentException if the payload exceeds 1 MiB
     */
    public static byte[] encodeJson(String json) {
        return FrameWriter.frameOf(json.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Wraps arbitrary payload bytes in a length prefix, unchecked (for tests of malformed input).
     *
     * @param payload payload bytes, possibly not UTF-8 or not JSON
     * @return prefix and payload
     * @throws IllegalArgumentException if the payload exceeds 1 MiB
     */
    public static byte[] encodePayload(byte[] payload) {
        return FrameWriter.frameOf(payload.clone());
    }

    /**
     * Decodes one payload (without its length prefix) received from a router.
     *
     * @param payload the JSON bytes
     * @return the frame; {@link Frame.Unknown} for a type this version does not know
     * @throws ProtocolException if the payload is malformed, empty, longer than 1 MiB, or a frame
     *                           only a client sends
     */
    public static Frame.RouterFrame decodeRouterFrame(byte[] payload) throws ProtocolException {
        return (Frame.RouterFrame) decode(payload, Direction.FROM_ROUTER);
    }

    /**
     * Decodes one payload (without its length prefix) received from a client.
     *
     * @param payload the JSON bytes
     * @return a {@link Frame.ClientFrame}, or {@link Frame.Unknown} for a type this version does not know
     * @throws ProtocolException if the payload is malformed, empty, longer than 1 MiB, or a frame
     *                           only a router sends
     */
    public static Frame decodeClientFrame(byte[] payload) throws ProtocolException {
        return decode(payload, Direction.FROM_CLIENT);
    }

    private static Frame decode(byte[] payload, Direction direction) throws ProtocolException {
        if (payload.length == 0) {
            throw new ProtocolException("frame length 0");
        }
        if (payload.length > SessionLimits.MAX_FRAME_BYTES_CEILING) {
            throw new ProtocolException("frame length " + payload.length + " exceeds max_frame_bytes "
                    + SessionLimits.MAX_FRAME_BYTES_CEILING);
        }
        return FrameReader.read(payload, 0, payload.length, direction);
    }

    /**
     * Whether {@code id} is a valid stream id, 1..2^53-1.
     *
     * @return true when valid
     */
    public static boolean isValidStreamId(long id) {
        return Checks.isStreamId(id);
    }

    /**
     * Truncates a {@code message} to at most 256 characters (code points), never splitting a
     * surrogate pair; null stays null.
     *
     * @param message human-readable detail
     * @return the message, possibly shortened
     */
    public static String truncateMessage(String message) {
        return Checks.truncateMessage(message);
    }
}
