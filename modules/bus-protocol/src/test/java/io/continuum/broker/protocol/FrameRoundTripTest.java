package io.continuum.broker.protocol;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Stream;

import static io.continuum.broker.protocol.TestFrames.payloadOf;
import static io.continuum.broker.protocol.TestFrames.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * bus-protocol-v1.md section 3: every frame encodes to a length-prefixed JSON object and decodes
 * back to itself, in the direction it travels.
 */
class FrameRoundTripTest {
    static Stream<Frame.RouterFrame> routerFrames() {
        return TestFrames.routerFrames().stream();
    }

    static Stream<Frame> clientFrames() {
        return TestFrames.clientFrames().stream();
    }

    @ParameterizedTest
    @MethodSource("routerFrames")
    void everyRouterFrameRoundTripsThroughTheBrokersDecoder(Frame.RouterFrame frame) throws ProtocolException {
        byte[] bytes = FrameCodec.encode(frame);
        assertEquals(bytes.length - 4, lengthOf(bytes), "section 3: 4-byte big-endian length of the payload");
        assertEquals(List.of(frame), FrameDecoder.forRouterFrames().decode(bytes));
        assertEquals(frame, FrameCodec.decodeRouterFrame(utf8(payloadOf(bytes))));
    }

    @ParameterizedTest
    @MethodSource("clientFrames")
    void everyClientFrameRoundTripsThroughTheRoutersDecoder(Frame frame) throws ProtocolException {
        byte[] bytes = FrameCodec.encode(frame);
        assertEquals(bytes.length - 4, lengthOf(bytes));
        assertEquals(List.of(frame), FrameDecoder.forClientFrames().decode(bytes));
        assertEquals(frame, FrameCodec.decodeClientFrame(utf8(payloadOf(bytes))));
    }

    @Test
    void typeIsTheFirstMemberAndOptionalMembersAreLeftOutWhenAbsent() {
        assertEquals("{\"type\":\"heartbeat\"}", payloadOf(FrameCodec.encode(Frame.Heartbeat.INSTANCE)));
        assertEquals("{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"s\"}",
                payloadOf(FrameCodec.encode(TestFrames.WELCOME_NO_LIMITS)));
        assertEquals("{\"type\":\"drain\",\"reason\":\"maintenance\"}",
                payloadOf(FrameCodec.encode(new Frame.Drain("maintenance", OptionalLong.empty()))));
        assertEquals("{\"type\":\"stream_refused\",\"stream_id\":3,\"code\":\"draining\"}",
                payloadOf(FrameCodec.encode(new Frame.StreamRefused(3, Code.DRAINING, null))));
    }

    @Test
    void theSpecExamplesOfSection3AreWhatTheEncoderWrites() {
        assertEquals("{\"type\":\"subscribe\",\"stream_id\":17,"
                        + "\"target\":{\"kind\":\"zmq_tcp\",\"namespace\":\"dynamo\",\"host\":\"10.244.3.7\",\"port\":5557}}",
                payloadOf(FrameCodec.encode(new Frame.Subscribe(17, new Target.ZmqTcp("dynamo", "10.244.3.7", 5557)))));
        assertEquals("{\"type\":\"hello\",\"protocol_versions\":[1],\"role\":\"broker\",\"client_id\":\"broker-a\","
                        + "\"kubernetes_namespace\":\"gpu-serving\",\"dynamo_namespaces\":[\"dynamo\",\"dynamo-canary\"],"
                        + "\"agent\":\"continuum-event-broker/0.1.0\"}",
                payloadOf(FrameCodec.encode(TestFrames.clientFrames().getFirst())));
        assertEquals("{\"type\":\"stream_closed\",\"stream_id\":17,\"code\":\"upstream_closed\"}",
                payloadOf(FrameCodec.encode(new Frame.StreamClosed(17, Code.UPSTREAM_CLOSED))));
        assertEquals("{\"type\":\"draining\",\"deadline_ms\":25000}",
                payloadOf(FrameCodec.encode(new Frame.Draining(25_000))));
        assertEquals("{\"type\":\"error\",\"code\":\"superseded\",\"message\":\"m\",\"terminal\":true}",
                payloadOf(FrameCodec.encode(new Frame.ErrorFrame(Code.SUPERSEDED, "m", true))));
    }

    @Test
    void theSpecExamplesOfSection3_2DecodeAsWritten() throws ProtocolException {
        assertEquals(TestFrames.WELCOME_ALL_LIMITS, FrameCodec.decodeRouterFrame(utf8("""
                {"type":"welcome","protocol_version":1,"session_id":"7f3c-session",
                 "heartbeat_interval_ms":10000,"idle_timeout_ms":30000,
                 "max_streams":1024,"max_stream_buffer_bytes":1048576,
                 "max_frame_bytes":65536}""")));
        assertEquals(new Frame.Drain("rebalance", OptionalLong.of(5000)),
                FrameCodec.decodeRouterFrame(utf8("{\"type\":\"drain\",\"reason\":\"rebalance\",\"deadline_ms\":5000}")));
        assertEquals(new Frame.Subscribe(17, new Target.AnnouncedSource("src-1")), FrameCodec.decodeRouterFrame(utf8(
                "{\"type\":\"subscribe\",\"stream_id\":17,\"target\":{\"kind\":\"announced_source\",\"source_id\":\"src-1\"}}")));
    }

    @Test
    void messagesAreTruncatedTo256CharactersOnEncodeWithoutSplittingASurrogatePair() throws ProtocolException {
        String ascii = "x".repeat(300);
        Frame.ErrorFrame decoded = (Frame.ErrorFrame) FrameCodec.decodeRouterFrame(
                utf8(payloadOf(FrameCodec.encode(new Frame.ErrorFrame(Code.INTERNAL_ERROR, ascii, false)))));
        assertEquals("x".repeat(256), decoded.message());

        String emoji = "\uD83D\uDE00".repeat(300); // 300 characters, 600 UTF-16 units
        Frame refused = FrameCodec.decodeClientFrame(utf8(payloadOf(
                FrameCodec.encode(new Frame.StreamRefused(5, Code.TARGET_NOT_ALLOWED, emoji)))));
        assertEquals(new Frame.StreamRefused(5, Code.TARGET_NOT_ALLOWED, "\uD83D\uDE00".repeat(256)), refused);

        assertEquals("y".repeat(256), FrameCodec.truncateMessage("y".repeat(256)));
        assertEquals(null, FrameCodec.truncateMessage(null));
    }

    @Test
    void streamIdsOutside1To2Pow53Minus1CannotBeEncoded() {
        for (long bad : new long[]{0, -1, FrameCodec.MAX_STREAM_ID + 1, Long.MAX_VALUE, Long.MIN_VALUE}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> FrameCodec.encode(new Frame.StreamOpened(bad)));
            assertEquals("stream_id " + bad + " out of range 1..2^53-1", e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> FrameCodec.encode(new Frame.Unsubscribe(bad)));
            assertThrows(IllegalArgumentException.class,
                    () -> FrameCodec.encode(new Frame.Subscribe(bad, new Target.AnnouncedSource("a"))));
        }
    }

    @Test
    void theEncoderRefusesWhatTheDecoderWouldReject() {
        assertThrows(IllegalArgumentException.class, () -> FrameCodec.encode(new Frame.Welcome(1, "",
                OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty())));
        assertThrows(IllegalArgumentException.class, () -> FrameCodec.encode(new Frame.Welcome(1, "a b ",
                OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty())));
        assertThrows(IllegalArgumentException.class, () -> FrameCodec.encode(new Frame.Draining(-1)));
        assertThrows(IllegalArgumentException.class,
                () -> FrameCodec.encode(new Frame.Subscribe(1, new Target.ZmqTcp("d", "h", 0))));
        assertThrows(IllegalArgumentException.class,
                () -> FrameCodec.encode(new Frame.Subscribe(1, new Target.ZmqTcp("d", "[::1]", 80))));
        assertThrows(IllegalArgumentException.class,
                () -> FrameCodec.encode(new Frame.Subscribe(1, new Target.Unsupported("ftp", "r"))));
        IllegalArgumentException known = assertThrows(IllegalArgumentException.class,
                () -> FrameCodec.encode(new Frame.Unknown("subscribe")));
        assertEquals("frame type 'subscribe' is known; encode its record instead of Unknown", known.getMessage());
    }

    @Test
    void encodeJsonWrapsArbitraryTextForTestPeers() {
        byte[] frame = FrameCodec.encodeJson("{\"type\":\"subscribe\",\"stream_id\":0}");
        assertEquals(34, lengthOf(frame));
        assertEquals("{\"type\":\"subscribe\",\"stream_id\":0}", payloadOf(frame));
    }

    private static long lengthOf(byte[] frame) {
        return ((frame[0] & 0xFFL) << 24) | ((frame[1] & 0xFF) << 16) | ((frame[2] & 0xFF) << 8) | (frame[3] & 0xFF);
    }
}
