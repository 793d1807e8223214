package io.continuum.broker.protocol;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Stream;

import static io.continuum.broker.protocol.TestFrames.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The decoding rules docs/protocol.md lists for well-formed frames (bus-protocol-v1.md sections
 * 3 and 3.2): targets that cannot be served still decode, so that section 5 check 4 can answer
 * {@code unsupported_target} for their stream id; optional members take their defaults.
 */
class DecodingRulesTest {
    private static final String ZMQ = "\"kind\":\"zmq_tcp\"";

    static Stream<Arguments> targets() {
        return Stream.of(
                target("{" + ZMQ + ",\"namespace\":\"dynamo\",\"host\":\"10.244.3.7\",\"port\":5557}",
                        new Target.ZmqTcp("dynamo", "10.244.3.7", 5557)),
                target("{\"port\":5557,\"host\":\"fd00::7\",\"namespace\":\"dynamo\"," + ZMQ + "}",
                        new Target.ZmqTcp("dynamo", "fd00::7", 5557)),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"" + "h".repeat(253) + "\",\"port\":1,\"extra\":[1]}",
                        new Target.ZmqTcp("d", "h".repeat(253), 1)),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"h\",\"port\":65535.0}", new Target.ZmqTcp("d", "h", 65_535)),
                // R-BEH-10: announced_source decodes; the relay refuses it with unsupported_target
                target("{\"kind\":\"announced_source\",\"source_id\":\"s-1\"}", new Target.AnnouncedSource("s-1")),
                target("{\"kind\":\"announced_source\"}", new Target.AnnouncedSource(null)),
                target(null, new Target.Unsupported(null, "target missing")),
                target("null", new Target.Unsupported(null, "target missing")),
                target("\"tcp://10.0.0.1:5557\"", new Target.Unsupported(null, "target is not an object")),
                target("[]", new Target.Unsupported(null, "target is not an object")),
                target("{}", new Target.Unsupported(null, "target.kind missing or not a string")),
                target("{\"kind\":7,\"host\":\"h\"}", new Target.Unsupported(null, "target.kind missing or not a string")),
                target("{\"kind\":\"ipc\"}", new Target.Unsupported("ipc", "target kind is neither zmq_tcp nor announced_source")),
                target("{\"kind\":\"ZMQ_TCP\"}", new Target.Unsupported("ZMQ_TCP", "target kind is neither zmq_tcp nor announced_source")),
                target("{" + ZMQ + ",\"host\":\"h\",\"port\":1}",
                        unsupported("target.namespace missing or not a non-empty string")),
                target("{" + ZMQ + ",\"namespace\":\"\",\"host\":\"h\",\"port\":1}",
                        unsupported("target.namespace missing or not a non-empty string")),
                target("{" + ZMQ + ",\"namespace\":[\"d\"],\"host\":\"h\",\"port\":1}",
                        unsupported("target.namespace missing or not a non-empty string")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"port\":1}", unsupported("target.host missing")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":null,\"port\":1}", unsupported("target.host missing")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":167772161,\"port\":1}", unsupported("target.host is not a string")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"\",\"port\":1}", unsupported("target.host is empty")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"" + "h".repeat(254) + "\",\"port\":1}",
                        unsupported("target.host longer than 253 characters")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"[fd00::7]\",\"port\":1}",
                        unsupported("target.host contains a bracket")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"10.0.0.1 \",\"port\":1}",
                        unsupported("target.host contains whitespace or a control character")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"a\\nb\",\"port\":1}",
                        unsupported("target.host contains whitespace or a control character")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"a\\u00a0b\",\"port\":1}",
                        unsupported("target.host contains whitespace or a control character")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"a\\u0085b\",\"port\":1}",
                        unsupported("target.host contains whitespace or a control character")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"h\"}", unsupported("target.port missing or not an integer")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"h\",\"port\":\"5557\"}",
                        unsupported("target.port missing or not an integer")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"h\",\"port\":55.5}",
                        unsupported("target.port missing or not an integer")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"h\",\"port\":0}", unsupported("target.port out of range 1..65535")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"h\",\"port\":65536}", unsupported("target.port out of range 1..65535")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"h\",\"port\":-1}", unsupported("target.port out of range 1..65535")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"h\",\"port\":1e100}", unsupported("target.port out of range 1..65535")),
                // check order: namespace, then host, then port
                target("{" + ZMQ + ",\"namespace\":\"\",\"host\":\"\",\"port\":0}",
                        unsupported("target.namespace missing or not a non-empty string")),
                target("{" + ZMQ + ",\"namespace\":\"d\",\"host\":\"\",\"port\":0}", unsupported("target.host is empty")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("targets")
    void aSubscribeAlwaysDecodesWhenItsStreamIdIsValid(String targetJson, Target expected) throws ProtocolException {
        String json = "{\"type\":\"subscribe\",\"stream_id\":17" + (targetJson == null ? "" : ",\"target\":" + targetJson) + "}";
        assertEquals(new Frame.Subscribe(17, expected), FrameCodec.decodeRouterFrame(utf8(json)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"17", "17.0", "1.7e1", "1.7E+1", "170e-1", "17.000"})
    void integersAreJsonNumbersWithAnIntegralValue(String number) throws ProtocolException {
        assertEquals(new Frame.Unsubscribe(17), router("{\"type\":\"unsubscribe\",\"stream_id\":" + number + "}"));
    }

    @Test
    void streamIdsSpanExactly1To2Pow53Minus1() throws ProtocolException {
        assertEquals(new Frame.Unsubscribe(1), router("{\"type\":\"unsubscribe\",\"stream_id\":1}"));
        assertEquals(new Frame.Unsubscribe(9_007_199_254_740_991L),
                router("{\"type\":\"unsubscribe\",\"stream_id\":9007199254740991}"));
    }

    @Test
    void welcomeLimitsAreOptionalAndOutOfRangeValuesAreLeftToNegotiation() throws ProtocolException {
        assertEquals(new Frame.Welcome(1, "s", OptionalLong.of(-5), OptionalLong.empty(), OptionalLong.of(0),
                        OptionalLong.of(Long.MAX_VALUE), OptionalLong.of(Long.MIN_VALUE)),
                router("{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"s\",\"heartbeat_interval_ms\":-5,"
                        + "\"idle_timeout_ms\":null,\"max_streams\":0,\"max_stream_buffer_bytes\":1e30,"
                        + "\"max_frame_bytes\":-99999999999999999999}"));
    }

    @Test
    void aWelcomeWithAVersionNotOfferedStillDecodesTheSessionDecides() throws ProtocolException {
        assertEquals(new Frame.Welcome(7, "x", OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(),
                        OptionalLong.empty(), OptionalLong.empty()),
                router("{\"type\":\"welcome\",\"protocol_version\":7,\"session_id\":\"x\"}"));
    }

    @Test
    void sessionIdsOf1To128VisibleAsciiCharactersAreAccepted() throws ProtocolException {
        String id = "!~" + "a".repeat(126);
        assertEquals(id, ((Frame.Welcome) router("{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"" + id + "\"}"))
                .sessionId());
    }

    @Test
    void aSessionIdWithInteriorSpacesAndEveryVisibleAsciiCharacterIsAccepted() throws ProtocolException {
        // Section 3.2: opaque. Whatever a header field value carries unchanged is accepted.
        assertEquals("abc def  g", ((Frame.Welcome) router(
                "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"abc def  g\"}")).sessionId());
        StringBuilder visible = new StringBuilder();
        for (char c = 0x21; c <= 0x7E; c++) {
            if (c != '"' && c != '\\') {
                visible.append(c);
            }
        }
        // every visible ASCII character but '"' and '\\' as is, then a space and those two JSON-escaped
        String json = visible + " \\\\\\\"x";
        String decoded = ((Frame.Welcome) router("{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\""
                + json + "\"}")).sessionId();
        assertEquals(visible + " \\\"x", decoded);
    }

    @Test
    void drainDefaultsToAnEmptyReasonAndNoDeadline() throws ProtocolException {
        assertEquals(new Frame.Drain("", OptionalLong.empty()), router("{\"type\":\"drain\"}"));
        assertEquals(new Frame.Drain("", OptionalLong.empty()), router("{\"type\":\"drain\",\"reason\":null,\"deadline_ms\":null}"));
        assertEquals(new Frame.Drain("shutdown", OptionalLong.of(0)), router("{\"type\":\"drain\",\"reason\":\"shutdown\",\"deadline_ms\":0}"));
        assertEquals(new Frame.Drain("other", OptionalLong.of(Long.MAX_VALUE)),
                router("{\"type\":\"drain\",\"reason\":\"other\",\"deadline_ms\":1e20}"));
        assertEquals(new Frame.Drain("other", OptionalLong.of(Long.MAX_VALUE)),
                router("{\"type\":\"drain\",\"reason\":\"other\",\"deadline_ms\":1E+99999999999}"));
        assertEquals(new Frame.Drain("other", OptionalLong.of(0)),
                router("{\"type\":\"drain\",\"reason\":\"other\",\"deadline_ms\":0.0e99999999999}"));
    }

    @Test
    void errorDefaultsToCodeUnknownNoMessageAndNotTerminal() throws ProtocolException {
        assertEquals(new Frame.ErrorFrame(Code.UNKNOWN, null, false), router("{\"type\":\"error\"}"));
        assertEquals(new Frame.ErrorFrame(Code.UNKNOWN, null, false),
                router("{\"type\":\"error\",\"code\":\"rate_limited\",\"terminal\":false}"));
        assertEquals(new Frame.ErrorFrame(Code.SUPERSEDED, null, true),
                router("{\"type\":\"error\",\"code\":\"superseded\",\"message\":null,\"terminal\":true}"));
    }

    @Test
    void receivedMessagesAreCutTo256Characters() throws ProtocolException {
        assertEquals(new Frame.ErrorFrame(Code.INTERNAL_ERROR, "m".repeat(256), false),
                router("{\"type\":\"error\",\"code\":\"internal_error\",\"message\":\"" + "m".repeat(1000) + "\"}"));
    }

    @Test
    void unknownMembersAreIgnoredWhateverTheirShape() throws ProtocolException {
        assertEquals(new Frame.Unsubscribe(5), router("{\"type\":\"unsubscribe\",\"v2_hint\":{\"a\":[1,{\"b\":null}]},"
                + "\"stream_id\":5,\"target\":\"ignored here\",\"z\":1e999}"));
        assertEquals(Frame.Heartbeat.INSTANCE, router("{\"type\":\"heartbeat\",\"stream_id\":\"not checked\"}"));
    }

    @Test
    void typeNeedNotBeTheFirstMember() throws ProtocolException {
        assertEquals(new Frame.Subscribe(3, new Target.AnnouncedSource("a")),
                router("{\"target\":{\"source_id\":\"a\",\"kind\":\"announced_source\"},\"stream_id\":3,\"type\":\"subscribe\"}"));
        assertEquals(new Frame.Unknown("later"), router("{\"x\":1,\"type\":\"later\"}"));
    }

    @Test
    void whitespaceAroundTheObjectAndEscapesAreJson() throws ProtocolException {
        assertEquals(new Frame.Drain("r\u00e9\"\n", OptionalLong.empty()),
                router(" \r\n\t{ \"type\" : \"drain\" , \"reason\" : \"r\\u00e9\\\"\\n\" }\n "));
        assertEquals(Frame.Heartbeat.INSTANCE, router("{\"type\":\"heart\\u0062eat\"}"));
    }

    @Test
    void nestingUpTo16LevelsIsAcceptedInIgnoredMembers() throws ProtocolException {
        assertEquals(Frame.Heartbeat.INSTANCE,
                router("{\"type\":\"heartbeat\",\"x\":" + "[".repeat(15) + "]".repeat(15) + "}"));
    }

    @Test
    void helloDecodesOnTheRoutersSide() throws ProtocolException {
        assertEquals(new Frame.Hello(List.of(1, 2), "kv_listener", "c", "k", List.of("a", "b"), null),
                FrameCodec.decodeClientFrame(utf8("{\"type\":\"hello\",\"protocol_versions\":[1,2.0],\"role\":\"kv_listener\","
                        + "\"client_id\":\"c\",\"kubernetes_namespace\":\"k\",\"dynamo_namespaces\":[\"a\",\"b\"],\"future\":1}")));
    }

    @Test
    void clientCodesOutsideTheEnumMapToUnknown() throws ProtocolException {
        assertEquals(new Frame.StreamClosed(4, Code.UNKNOWN),
                FrameCodec.decodeClientFrame(utf8("{\"type\":\"stream_closed\",\"stream_id\":4,\"code\":\"gone\"}")));
    }

    private static Frame.RouterFrame router(String json) throws ProtocolException {
        return FrameCodec.decodeRouterFrame(utf8(json));
    }

    private static Arguments target(String json, Target expected) {
        return Arguments.of(json, expected);
    }

    private static Target unsupported(String reason) {
        return new Target.Unsupported("zmq_tcp", reason);
    }
}
