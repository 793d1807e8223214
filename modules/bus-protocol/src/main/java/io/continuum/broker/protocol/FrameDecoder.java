package io.continuum.broker.protocol;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

import io.continuum.broker.protocol.FrameType.Direction;

/**
 * Incremental decoder of one frame stream (bus-protocol-v1.md section 3): feed it the bytes of a
 * session body as they arrive, split anywhere, and it hands back every complete frame in order.
 * <ul>
 *     <li>A length prefix of 0 or above {@link #maxFrameBytes()} is rejected from its 4 bytes
 *     alone, before anything is allocated; the decoder never holds a buffer larger than the
 *     limit.</li>
 *     <li>A frame wholly inside one heap chunk is parsed in place, without copying.</li>
 *     <li>After the first {@link ProtocolException} the decoder is dead: every later call throws
 *     that same exception.</li>
 * </ul>
 * Not thread-safe: one decoder per session stream, fed by one reader.
 *
 * @param <F> what the decoded frames are: {@link Frame.RouterFrame} for {@link #forRouterFrames()},
 *            {@link Frame} (a {@link Frame.ClientFrame} or {@link Frame.Unknown}) for
 *            {@link #forClientFrames()}
 */
public final class FrameDecoder<F extends Frame> {
    private final Direction direction;
    private int maxFrameBytes = SessionLimits.DEFAULT_MAX_FRAME_BYTES;
    /** Prefix bytes of the current frame read so far, 0..4. */
    private int prefixRead;
    /** The current frame's length once the prefix is complete (unsigned, so a long). */
    private long frameLength;
    /** Holds a frame split across chunks; capacity never above {@link #maxFrameBytes}. */
    private byte[] body;
    private int bodyRead;
    private ProtocolException failure;

    private FrameDecoder(Direction direction) {
        this.direction = direction;
    }

    /**
     * A decoder of what a router sends: the broker's side. A client-only frame type
     * ({@code hello}, {@code stream_opened}, ...) is a protocol error.
     *
     * @return new decoder with the pre-welcome limit of 65,536 bytes
     */
    public static FrameDecoder<Frame.RouterFrame> forRouterFrames() {
        return new FrameDecoder<>(Direction.FROM_ROUTER);
    }

    /**
     * A decoder of what a client sends: a router's side (the project's test router). Frames are
     * {@link Frame.ClientFrame}s or {@link Frame.Unknown}; a router-only frame type
     * ({@code welcome}, {@code subscribe}, ...) is a protocol error.
     *
     * @return new decoder with the pre-welcome limit of 65,536 bytes
     */
    public static FrameDecoder<Frame> forClientFrames() {
        return new FrameDecoder<>(Direction.FROM_CLIENT);
    }

    /**
     * The current frame size limit.
     *
     * @return max_frame_bytes
     */
    public int maxFrameBytes() {
        return maxFrameBytes;
    }

    /**
     * Sets the frame size limit: 65,536 before {@code welcome}, then the negotiated
     * {@link SessionLimits#maxFrameBytes()}. Call it from the sink that receives {@code welcome}
     * and it applies to the very next frame of the same chunk. If the length of a frame already
     * being received exceeds the new limit, the next {@code decode} call throws.
     *
     * @param maxFrameBytes new limit, 1..1,048,576
     * @throws IllegalArgumentException outside that range
     */
    public void setMaxFrameBytes(int maxFrameBytes) {
        if (maxFrameBytes < 1 || maxFrameBytes > SessionLimits.MAX_FRAME_BYTES_CEILING) {
            throw new IllegalArgumentException("max_frame_bytes " + maxFrameBytes + " out of range 1.."
                    + SessionLimits.MAX_FRAME_BYTES_CEILING);
        }
        this.maxFrameBytes = maxFrameBytes;
        if (failure != null) {
            return;
        }
        if (prefixRead == 4 && frameLength > maxFrameBytes) {
            fail(tooLong(frameLength));
            return;
        }
        if (body != null && body.length > maxFrameBytes) {
            if (prefixRead == 4) {
                // A frame is being received into body (perhaps none of its bytes yet, when a chunk ended
                // right after the prefix): keep a buffer of exactly its length, which fits the new limit.
                // Dropping the buffer here once made the next decode call fail with a
                // NullPointerException (found by FrameDecoderFuzzTest).
                body = Arrays.copyOf(body, (int) frameLength);
            } else {
                body = null;
            }
        }
    }

    /**
     * Whether a protocol error has killed this decoder.
     *
     * @return true after the first protocol error
     */
    public boolean isFailed() {
        return failure != null;
    }

    /**
     * Whether bytes of an incomplete frame are pending (the body ended mid-frame if the stream ends now).
     *
     * @return true when a frame has started but not completed
     */
    public boolean hasPartialFrame() {
        return prefixRead > 0;
    }

    /**
     * Decodes what {@code chunk} completes, handing each frame to {@code sink} in order as soon as
     * it is decoded, so frames that precede a malformed one are delivered before the exception.
     * Consumes the whole chunk (its position ends at its limit) unless an exception is thrown.
     * If the sink itself throws, that exception propagates, the chunk's position is left just after
     * the frame that was delivered, and the decoder stays usable at that frame boundary.
     *
     * @param chunk bytes received, heap or direct
     * @param sink  receives each complete frame
     * @throws ProtocolException at the first malformed frame, and on every call after it
     */
    public void decode(ByteBuffer chunk, Consumer<? super F> sink) throws ProtocolException {
        if (failure != null) {
            throw failure;
        }
        while (chunk.hasRemaining()) {
            if (prefixRead < 4) {
                while (prefixRead < 4 && chunk.hasRemaining()) {
                    frameLength = (frameLength << 8) | (chunk.get() & 0xFF);
                    prefixRead++;
                }
                if (prefixRead < 4) {
                    return;
                }
                if (frameLength == 0) {
                    throw fail(new ProtocolException("frame length 0"));
                }
                if (frameLength > maxFrameBytes) {
                    throw fail(tooLong(frameLength));
                }
                int length = (int) frameLength;
                if (chunk.hasArray() && chunk.remaining() >= length) {
                    int at = chunk.arrayOffset() + chunk.position();
                    chunk.position(chunk.position() + length);
                    nextFrame();
                    emit(chunk.array(), at, length, sink);
                    continue;
                }
                if (body == null || body.length < length) {
                    body = new byte[Math.min(maxFrameBytes, Math.max(length, 256))];
                }
            }
            int length = (int) frameLength;
            int n = Math.min(length - bodyRead, chunk.remaining());
            chunk.get(body, bodyRead, n);
            bodyRead += n;
            if (bodyRead == length) {
                nextFrame();
                emit(body, 0, length, sink);
            }
        }
    }

    /**
     * Decodes what {@code bytes} completes, handing each frame to {@code sink} in order.
     *
     * @param bytes  buffer
     * @param offset first byte
     * @param length number of bytes
     * @param sink   receives each complete frame
     * @throws ProtocolException at the first malformed frame, and on every call after it
     */
    public void decode(byte[] bytes, int offset, int length, Consumer<? super F> sink) throws ProtocolException {
        decode(ByteBuffer.wrap(bytes, offset, length), sink);
    }

    /**
     * Decodes what {@code chunk} completes. If a protocol error occurs after some frames of the
     * same chunk were decoded, those frames are not returned: use
     * {@link #decode(ByteBuffer, Consumer)} to act on every frame that preceded the error.
     *
     * @param chunk bytes received
     * @return the completed frames in order, often empty
     * @throws ProtocolException at the first malformed frame, and on every call after it
     */
    public List<F> decode(ByteBuffer chunk) throws ProtocolException {
        List<F> out = new ArrayList<>(2);
        decode(chunk, out::add);
        return out;
    }

    /**
     * Decodes what {@code bytes} completes; see {@link #decode(ByteBuffer)}.
     *
     * @return the completed frames in order, often empty
     * @throws ProtocolException at the first malformed frame, and on every call after it
     */
    public List<F> decode(byte[] bytes) throws ProtocolException {
        return decode(ByteBuffer.wrap(bytes));
    }

    /** Capacity of the internal frame buffer (0 when none); for tests of the allocation bound. */
    int bufferCapacity() {
        return body == null ? 0 : body.length;
    }

    private void nextFrame() {
        prefixRead = 0;
        frameLength = 0;
        bodyRead = 0;
    }

    @SuppressWarnings("unchecked")
    private void emit(byte[] bytes, int offset, int length, Consumer<? super F> sink) throws ProtocolException {
        Frame frame;
        try {
            frame = FrameReader.read(bytes, offset, length, direction);
        } catch (ProtocolException e) {
            throw fail(e);
        }
        sink.accept((F) frame);
    }

    private ProtocolException tooLong(long length) {
        return new ProtocolException("frame length " + length + " exceeds max_frame_bytes " + maxFrameBytes);
    }

    private ProtocolException fail(ProtocolException e) {
        failure = e;
        body = null;
        return e;
    }
}
