package io.continuum.broker.protocol;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import static io.continuum.broker.protocol.TestFrames.concat;
import static io.continuum.broker.protocol.TestFrames.prefix;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * bus-protocol-v1.md section 3 on a byte stream: frames arrive split anywhere and several per
 * chunk; the length limit is enforced from the prefix alone.
 */
class FrameDecoderTest {
    private static final List<Frame.RouterFrame> ROUTER_FRAMES = TestFrames.routerFrames();
    private static final byte[] ROUTER_STREAM = concat(ROUTER_FRAMES.stream().map(FrameCodec::encode).toList());

    @Test
    void manyFramesInOneChunkComeOutInOrder() throws ProtocolException {
        assertEquals(ROUTER_FRAMES, FrameDecoder.forRouterFrames().decode(ROUTER_STREAM));
    }

    @Test
    void oneByteAtATimeGivesTheSameFramesAndNeverBuffersMoreThanTheLimit() throws ProtocolException {
        FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
        List<Frame.RouterFrame> out = new ArrayList<>();
        for (byte b : ROUTER_STREAM) {
            out.addAll(decoder.decode(new byte[]{b}));
            assertTrue(decoder.bufferCapacity() <= decoder.maxFrameBytes());
        }
        assertEquals(ROUTER_FRAMES, out);
        assertFalse(decoder.hasPartialFrame());
    }

    @Test
    void everySplitPointOfTheStreamGivesTheSameFrames() throws ProtocolException {
        for (int split = 0; split <= ROUTER_STREAM.length; split++) {
            FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
            List<Frame.RouterFrame> out = new ArrayList<>(decoder.decode(ByteBuffer.wrap(ROUTER_STREAM, 0, split)));
            out.addAll(decoder.decode(ByteBuffer.wrap(ROUTER_STREAM, split, ROUTER_STREAM.length - split)));
            assertEquals(ROUTER_FRAMES, out, "split at " + split);
        }
    }

    @Test
    void clientFramesDecodeOnTheRoutersSideByteAtATime() throws ProtocolException {
        List<Frame> frames = TestFrames.clientFrames();
        byte[] stream = concat(frames.stream().map(FrameCodec::encode).toList());
        FrameDecoder<Frame> decoder = FrameDecoder.forClientFrames();
        List<Frame> out = new ArrayList<>();
        for (byte b : stream) {
            decoder.decode(new byte[]{b}, 0, 1, out::add);
        }
        assertEquals(frames, out);
    }

    @Test
    void directReadOnlyAndOffsetBuffersDecodeAlikeAndAreConsumed() throws ProtocolException {
        ByteBuffer direct = ByteBuffer.allocateDirect(ROUTER_STREAM.length).put(ROUTER_STREAM).flip();
        assertEquals(ROUTER_FRAMES, FrameDecoder.forRouterFrames().decode(direct));
        assertFalse(direct.hasRemaining());

        ByteBuffer readOnly = ByteBuffer.wrap(ROUTER_STREAM).asReadOnlyBuffer();
        assertEquals(ROUTER_FRAMES, FrameDecoder.forRouterFrames().decode(readOnly));
        assertFalse(readOnly.hasRemaining());

        byte[] padded = concat(List.of(new byte[7], ROUTER_STREAM, new byte[5]));
        ByteBuffer slice = ByteBuffer.wrap(padded, 7, ROUTER_STREAM.length).slice(); // arrayOffset 7
        assertEquals(ROUTER_FRAMES, FrameDecoder.forRouterFrames().decode(slice));
    }

    @Test
    void prefix2Pow31Minus1IsRejectedFromItsFourBytesWithoutAllocating() {
        FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> decoder.decode(new byte[]{0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF}));
        assertEquals("frame length 2147483647 exceeds max_frame_bytes 65536", e.getMessage());
        assertEquals(0, decoder.bufferCapacity());
    }

    @Test
    void prefixZeroIsRejectedFromItsFourBytesWithoutAllocating() {
        FrameDecoder<Frame> decoder = FrameDecoder.forClientFrames();
        ProtocolException e = assertThrows(ProtocolException.class, () -> decoder.decode(prefix(0)));
        assertEquals("frame length 0", e.getMessage());
        assertEquals(0, decoder.bufferCapacity());
    }

    @Test
    void aPartialPrefixAllocatesNothingAndAnOversizedOneFailsOnItsLastByte() throws ProtocolException {
        FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
        assertEquals(List.of(), decoder.decode(new byte[]{(byte) 0xFF, (byte) 0xFF, (byte) 0xFF}));
        assertTrue(decoder.hasPartialFrame());
        assertEquals(0, decoder.bufferCapacity());
        assertThrows(ProtocolException.class, () -> decoder.decode(new byte[]{(byte) 0xFF}));
        assertEquals(0, decoder.bufferCapacity());
    }

    @Test
    void aFrameSplitAcrossChunksIsBufferedInAtMostItsOwnLength() throws ProtocolException {
        FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
        byte[] frame = FrameCodec.encode(new Frame.Unsubscribe(5));
        assertEquals(List.of(), decoder.decode(ByteBuffer.wrap(frame, 0, 6)));
        assertTrue(decoder.bufferCapacity() <= Math.max(256, frame.length - 4));
        assertEquals(List.of(new Frame.Unsubscribe(5)), decoder.decode(ByteBuffer.wrap(frame, 6, frame.length - 6)));
    }

    @Test
    void afterTheFirstProtocolErrorEveryCallThrowsThatSameError() {
        FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
        ProtocolException first = assertThrows(ProtocolException.class,
                () -> decoder.decode(FrameCodec.encodeJson("{\"type\":\"subscribe\"}")));
        byte[] valid = FrameCodec.encode(Frame.Heartbeat.INSTANCE);
        assertSame(first, assertThrows(ProtocolException.class, () -> decoder.decode(valid)));
        assertSame(first, assertThrows(ProtocolException.class, () -> decoder.decode(new byte[0])));
        assertSame(first, assertThrows(ProtocolException.class, () -> decoder.decode(valid, 0, valid.length, f -> { })));
        assertTrue(decoder.isFailed());
        assertEquals(0, decoder.bufferCapacity());
    }

    @Test
    void theSinkReceivesTheFramesThatPrecedeAMalformedOne() {
        byte[] chunk = concat(List.of(FrameCodec.encode(Frame.Heartbeat.INSTANCE),
                FrameCodec.encode(new Frame.ErrorFrame(Code.SUPERSEDED, null, true)),
                FrameCodec.encodeJson("{\"type\":\"hello\"}"),
                FrameCodec.encode(Frame.Heartbeat.INSTANCE)));
        List<Frame.RouterFrame> seen = new ArrayList<>();
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> FrameDecoder.forRouterFrames().decode(ByteBuffer.wrap(chunk), seen::add));
        assertEquals("frame type 'hello' is not valid from a router", e.getMessage());
        assertEquals(List.of(Frame.Heartbeat.INSTANCE, new Frame.ErrorFrame(Code.SUPERSEDED, null, true)), seen);
    }

    @Test
    void unknownFrameTypesAreDeliveredAsUnknownForTheCallerToCountAndIgnore() throws ProtocolException {
        // section 3: a frame with an unknown type MUST be ignored (counted, logged at debug)
        assertEquals(List.of(new Frame.Unknown("gossip"), Frame.Heartbeat.INSTANCE), FrameDecoder.forRouterFrames()
                .decode(concat(List.of(FrameCodec.encodeJson("{\"type\":\"gossip\",\"x\":{\"y\":[1,2,{}]}}"),
                        FrameCodec.encode(Frame.Heartbeat.INSTANCE)))));
        assertEquals(List.of(new Frame.Unknown("")), FrameDecoder.forClientFrames().decode(FrameCodec.encodeJson("{\"type\":\"\"}")));
    }

    @Test
    void theNegotiatedLimitSetFromTheWelcomeSinkAppliesToTheNextFrameOfTheSameChunk() {
        // section 3: before welcome the limit is 65,536; after it, the negotiated max_frame_bytes
        Frame.Welcome welcome = new Frame.Welcome(1, "s", OptionalLong.empty(), OptionalLong.empty(),
                OptionalLong.empty(), OptionalLong.empty(), OptionalLong.of(4_096));
        byte[] big = FrameCodec.encodeJson("{\"type\":\"heartbeat\",\"pad\":\"" + "p".repeat(5_000) + "\"}");
        byte[] chunk = concat(List.of(FrameCodec.encode(welcome), big));
        FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
        List<Frame.RouterFrame> seen = new ArrayList<>();
        ProtocolException e = assertThrows(ProtocolException.class, () -> decoder.decode(ByteBuffer.wrap(chunk), f -> {
            seen.add(f);
            if (f instanceof Frame.Welcome w) {
                decoder.setMaxFrameBytes(SessionLimits.negotiate(w).maxFrameBytes());
            }
        }));
        assertEquals(List.of(welcome), seen);
        assertEquals("frame length 5029 exceeds max_frame_bytes 4096", e.getMessage());
    }

    @Test
    void withoutTheLowerLimitTheSameFrameIsAccepted() throws ProtocolException {
        byte[] big = FrameCodec.encodeJson("{\"type\":\"heartbeat\",\"pad\":\"" + "p".repeat(5_000) + "\"}");
        assertEquals(List.of(Frame.Heartbeat.INSTANCE), FrameDecoder.forRouterFrames().decode(big));
    }

    @Test
    void aRaisedLimitAdmitsLargerFramesUpTo1MiB() throws ProtocolException {
        FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
        decoder.setMaxFrameBytes(SessionLimits.MAX_FRAME_BYTES_CEILING);
        String pad = "p".repeat(SessionLimits.MAX_FRAME_BYTES_CEILING - 40);
        byte[] big = FrameCodec.encodeJson("{\"type\":\"heartbeat\",\"pad\":\"" + pad + "\"}");
        // split so that the frame is buffered, not parsed in place
        List<Frame.RouterFrame> out = new ArrayList<>(decoder.decode(ByteBuffer.wrap(big, 0, 1000)));
        out.addAll(decoder.decode(ByteBuffer.wrap(big, 1000, big.length - 1000)));
        assertEquals(List.of(Frame.Heartbeat.INSTANCE), out);
        assertTrue(decoder.bufferCapacity() <= SessionLimits.MAX_FRAME_BYTES_CEILING);
    }

    @Test
    void loweringTheLimitBelowAFrameAlreadyAnnouncedFailsTheNextCall() throws ProtocolException {
        FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
        byte[] big = FrameCodec.encodeJson("{\"type\":\"heartbeat\",\"pad\":\"" + "p".repeat(5_000) + "\"}");
        decoder.decode(ByteBuffer.wrap(big, 0, 100));
        decoder.setMaxFrameBytes(4_096);
        assertEquals(0, decoder.bufferCapacity());
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> decoder.decode(ByteBuffer.wrap(big, 100, big.length - 100)));
        assertEquals("frame length 5029 exceeds max_frame_bytes 4096", e.getMessage());
    }

    @Test
    void loweringTheLimitShrinksABufferLeftFromALargerFrame() throws ProtocolException {
        FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
        byte[] big = FrameCodec.encodeJson("{\"type\":\"heartbeat\",\"pad\":\"" + "p".repeat(60_000) + "\"}");
        decoder.decode(ByteBuffer.wrap(big, 0, 10));
        decoder.decode(ByteBuffer.wrap(big, 10, big.length - 10));
        assertTrue(decoder.bufferCapacity() > 4_096);
        byte[] small = FrameCodec.encode(new Frame.Unsubscribe(9));
        decoder.decode(ByteBuffer.wrap(small, 0, 7)); // a frame is in flight
        decoder.setMaxFrameBytes(4_096);
        assertTrue(decoder.bufferCapacity() <= 4_096);
        assertEquals(List.of(new Frame.Unsubscribe(9)), decoder.decode(ByteBuffer.wrap(small, 7, small.length - 7)));
    }

    /** Found by FrameDecoderFuzzTest: the chunk ended right after the prefix, no body byte read yet. */
    @Test
    void loweringTheLimitRightAfterAPrefixKeepsTheFrameItAnnounced() throws ProtocolException {
        FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
        byte[] big = FrameCodec.encodeJson("{\"type\":\"heartbeat\",\"pad\":\"" + "p".repeat(60_000) + "\"}");
        decoder.decode(ByteBuffer.wrap(big, 0, 10));
        decoder.decode(ByteBuffer.wrap(big, 10, big.length - 10));
        byte[] small = FrameCodec.encode(new Frame.Unsubscribe(9));
        decoder.decode(ByteBuffer.wrap(small, 0, 4)); // the prefix only
        decoder.setMaxFrameBytes(4_096);
        assertTrue(decoder.bufferCapacity() <= 4_096);
        assertEquals(List.of(new Frame.Unsubscribe(9)), decoder.decode(ByteBuffer.wrap(small, 4, small.length - 4)));
    }

    @Test
    void theLimitMustBeBetween1And1MiB() {
        FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
        assertThrows(IllegalArgumentException.class, () -> decoder.setMaxFrameBytes(0));
        assertThrows(IllegalArgumentException.class, () -> decoder.setMaxFrameBytes(SessionLimits.MAX_FRAME_BYTES_CEILING + 1));
        assertEquals(SessionLimits.DEFAULT_MAX_FRAME_BYTES, decoder.maxFrameBytes());
    }

    @Test
    void theDecoderStartsAtThePreWelcomeLimit() {
        assertEquals(65_536, FrameDecoder.forRouterFrames().maxFrameBytes());
        assertEquals(65_536, FrameDecoder.forClientFrames().maxFrameBytes());
    }

    @Test
    void aFrameOfExactlyTheLimitIsAccepted() throws ProtocolException {
        String head = "{\"type\":\"heartbeat\",\"pad\":\"";
        String pad = "p".repeat(65_536 - head.length() - 2);
        byte[] frame = FrameCodec.encodeJson(head + pad + "\"}");
        assertEquals(65_536, frame.length - 4);
        assertEquals(List.of(Frame.Heartbeat.INSTANCE), FrameDecoder.forRouterFrames().decode(frame));
    }
}
