package io.continuum.broker.protocol;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Coverage-guided fuzzing of the frame decoder (bus-protocol-v1.md section 3; docs/reliability.md, "Fuzzing"). The
 * input is a byte stream as a hostile router (or client) could send it, plus how to cut it into
 * chunks. The contract asserted, for every input:
 * <ol>
 *     <li>the decoder only yields frames or throws the one {@link ProtocolException}: any other
 *     exception escapes this method and is a finding;</li>
 *     <li>the outcome (the frames, then the error message or whether a frame is pending) is the
 *     same whether the stream arrives in one heap chunk, byte by byte, in fuzzer-chosen chunks
 *     of heap buffers with non-zero array offsets, or in direct buffers;</li>
 *     <li>after the first error every call throws that same exception;</li>
 *     <li>the decoder's only buffer never has a capacity above the current max_frame_bytes (the
 *     limit is raised by {@code welcome} exactly as the session does: R-BUF, section 3.2). That is
 *     the whole allocation bound: a frame inside one heap chunk is parsed in place, and
 *     {@link FrameReader} parses the payload bytes it is given, so what Jackson allocates grows
 *     with the payload, never with the declared length;</li>
 *     <li>{@link FrameCodec#decodeRouterFrame}/{@link FrameCodec#decodeClientFrame} agree with the
 *     decoder on the same bytes taken as one payload;</li>
 *     <li>the limit may also change between chunks, mid-frame: still only frames or the one
 *     protocol error, and the buffer within the limit of the moment.</li>
 * </ol>
 * Input layout (Jazzer's {@link FuzzedDataProvider}): the last byte picks the direction, the 8
 * before it seed the chunking, the rest is the stream. Seeds and every past finding live in
 * {@code src/test/resources/io/continuum/broker/protocol/FrameDecoderFuzzTestInputs/decoder/}.
 */
class FrameDecoderFuzzTest {

    @FuzzTest(maxDuration = "15s")
    void decoder(FuzzedDataProvider data) {
        boolean fromRouter = data.consumeBoolean();
        long chunking = data.consumeLong();
        byte[] stream = data.consumeRemainingAsBytes();

        Outcome whole = feed(fromRouter, stream, Chunks.WHOLE, chunking);
        assertEquals(whole, feed(fromRouter, stream, Chunks.BYTE_BY_BYTE, chunking), "byte by byte");
        assertEquals(whole, feed(fromRouter, stream, Chunks.HEAP_OFFSET, chunking), "heap chunks");
        assertEquals(whole, feed(fromRouter, stream, Chunks.DIRECT, chunking), "direct chunks");

        agreesWithSinglePayloadDecoding(fromRouter, stream);
        limitChangesBetweenChunks(fromRouter, stream, chunking);
    }

    /** What a stream decoded to: the frames in order, then the error or whether a frame is pending. */
    record Outcome(List<Frame> frames, String error, boolean partialFrame) {
    }

    private enum Chunks { WHOLE, BYTE_BY_BYTE, HEAP_OFFSET, DIRECT }

    private static Outcome feed(boolean fromRouter, byte[] stream, Chunks chunks, long chunking) {
        return fromRouter ? feed(FrameDecoder.forRouterFrames(), stream, chunks, chunking)
                : feed(FrameDecoder.forClientFrames(), stream, chunks, chunking);
    }

    private static <F extends Frame> Outcome feed(FrameDecoder<F> decoder, byte[] stream, Chunks chunks,
                                                  long chunking) {
        List<Frame> frames = new ArrayList<>();
        Random random = new Random(chunking);
        int at = 0;
        while (at < stream.length) {
            int n = switch (chunks) {
                case WHOLE -> stream.length;
                case BYTE_BY_BYTE -> 1;
                case HEAP_OFFSET, DIRECT -> 1 + random.nextInt(Math.min(stream.length - at, 1 + random.nextInt(300)));
            };
            ByteBuffer chunk = chunk(stream, at, n, chunks, random);
            at += n;
            try {
                decoder.decode(chunk, frame -> {
                    frames.add(frame);
                    if (frame instanceof Frame.Welcome welcome) {
                        // What the session does on welcome: the negotiated limit applies from the next frame on.
                        decoder.setMaxFrameBytes(SessionLimits.negotiate(welcome).maxFrameBytes());
                    }
                    assertBufferWithinLimit(decoder);
                });
            } catch (ProtocolException e) {
                assertTrue(decoder.isFailed(), "failed after " + e.getMessage());
                assertEquals(0, decoder.bufferCapacity(), "a dead decoder holds no buffer");
                ProtocolException again = assertThrows(ProtocolException.class,
                        () -> decoder.decode(ByteBuffer.wrap(new byte[] {0, 0, 0, 1, '{'})));
                assertSame(e, again, "a dead decoder repeats its first error");
                return new Outcome(frames, e.getMessage(), false);
            }
            assertFalse(chunk.hasRemaining(), "the whole chunk is consumed");
            assertBufferWithinLimit(decoder);
        }
        assertFalse(decoder.isFailed());
        return new Outcome(frames, null, decoder.hasPartialFrame());
    }

    /**
     * {@link FrameDecoder#setMaxFrameBytes} may also be called between chunks, in the middle of a frame
     * (its documented contract): whatever the limits, only frames or the one protocol error, and the
     * buffer within the limit of the moment.
     */
    private static void limitChangesBetweenChunks(boolean fromRouter, byte[] stream, long chunking) {
        FrameDecoder<? extends Frame> decoder = fromRouter ? FrameDecoder.forRouterFrames()
                : FrameDecoder.forClientFrames();
        Random random = new Random(~chunking);
        int at = 0;
        while (at < stream.length) {
            int n = 1 + random.nextInt(Math.min(stream.length - at, 1 + random.nextInt(64)));
            try {
                decoder.decode(ByteBuffer.wrap(stream, at, n), frame -> assertBufferWithinLimit(decoder));
            } catch (ProtocolException e) {
                return;
            }
            at += n;
            assertBufferWithinLimit(decoder);
            if (random.nextInt(3) == 0) {
                decoder.setMaxFrameBytes(random.nextBoolean() ? 1 + random.nextInt(300)
                        : 1 + random.nextInt(SessionLimits.MAX_FRAME_BYTES_CEILING));
                assertBufferWithinLimit(decoder);
            }
        }
    }

    private static ByteBuffer chunk(byte[] stream, int at, int n, Chunks chunks, Random random) {
        if (chunks == Chunks.DIRECT) {
            return ByteBuffer.allocateDirect(n).put(stream, at, n).flip();
        }
        if (chunks == Chunks.HEAP_OFFSET) {
            // A slice of a larger array: arrayOffset() and position() are both non-zero.
            int before = random.nextInt(8);
            byte[] backing = new byte[before + 3 + n + random.nextInt(8)];
            random.nextBytes(backing);
            System.arraycopy(stream, at, backing, before + 3, n);
            return ByteBuffer.wrap(backing, before, 3 + n).slice().position(3);
        }
        return ByteBuffer.wrap(stream, at, n);
    }

    private static void assertBufferWithinLimit(FrameDecoder<?> decoder) {
        int capacity = decoder.bufferCapacity();
        if (capacity > decoder.maxFrameBytes()) {
            throw new AssertionError("decoder buffer of " + capacity + " bytes exceeds max_frame_bytes "
                    + decoder.maxFrameBytes());
        }
    }

    /** One payload through FrameCodec and through a fresh decoder at the ceiling must agree. */
    private static void agreesWithSinglePayloadDecoding(boolean fromRouter, byte[] payload) {
        if (payload.length == 0 || payload.length > SessionLimits.MAX_FRAME_BYTES_CEILING) {
            return;
        }
        Outcome viaCodec;
        try {
            Frame frame = fromRouter ? FrameCodec.decodeRouterFrame(payload) : FrameCodec.decodeClientFrame(payload);
            viaCodec = new Outcome(List.of(frame), null, false);
        } catch (ProtocolException e) {
            viaCodec = new Outcome(List.of(), e.getMessage(), false);
        }
        FrameDecoder<? extends Frame> decoder = fromRouter ? FrameDecoder.forRouterFrames()
                : FrameDecoder.forClientFrames();
        decoder.setMaxFrameBytes(SessionLimits.MAX_FRAME_BYTES_CEILING);
        Outcome viaDecoder;
        try {
            viaDecoder = new Outcome(List.copyOf(decoder.decode(FrameCodec.encodePayload(payload))), null, false);
        } catch (ProtocolException e) {
            viaDecoder = new Outcome(List.of(), e.getMessage(), false);
        }
        assertEquals(viaCodec, viaDecoder, "FrameCodec and FrameDecoder disagree on one payload");
    }
}
