package io.continuum.broker.protocol;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

import static io.continuum.broker.protocol.TestFrames.concat;
import static io.continuum.broker.protocol.TestFrames.prefix;
import static io.continuum.broker.protocol.TestFrames.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * bus-protocol-v1.md section 3: every malformed frame is a protocol error with a precise message.
 * Each row is fed, whole, to a fresh decoder of the stated direction.
 */
class MalformedFrameTest {
    private static final boolean ROUTER = true;
    private static final boolean CLIENT = false;

    static Stream<Arguments> malformed() {
        return Stream.of(
                // ---- section 3: the length prefix ------------------------------------------------
                raw("3: N = 0", ROUTER, prefix(0), "frame length 0"),
                raw("3: N over the pre-welcome limit", ROUTER, prefix(70_000),
                        "frame length 70000 exceeds max_frame_bytes 65536"),
                raw("3: N = 65,537", ROUTER, prefix(65_537), "frame length 65537 exceeds max_frame_bytes 65536"),
                raw("3: N = 2^31-1", ROUTER, prefix(Integer.MAX_VALUE),
                        "frame length 2147483647 exceeds max_frame_bytes 65536"),
                raw("3: N with the top bit set is unsigned", ROUTER, prefix(0xFFFF_FFFFL),
                        "frame length 4294967295 exceeds max_frame_bytes 65536"),
                raw("3: N = 2^31", CLIENT, prefix(0x8000_0000L),
                        "frame length 2147483648 exceeds max_frame_bytes 65536"),

                // ---- section 3: UTF-8 (offsets count from the first payload byte) -------------------
                bytes("3: stray continuation byte", ROUTER, concat(utf8("{\"type\":\"abc"), hex("80"), utf8("\"}")),
                        "invalid UTF-8 at byte 12"),
                bytes("3: overlong encoding of '/'", ROUTER, concat(utf8("{\"type\":\""), hex("c0af"), utf8("\"}")),
                        "invalid UTF-8 at byte 9"),
                bytes("3: UTF-8-encoded surrogate U+D800", ROUTER, concat(utf8("{\"type\":\""), hex("eda080"), utf8("\"}")),
                        "invalid UTF-8 at byte 9"),
                bytes("3: code point above U+10FFFF", ROUTER, concat(utf8("{\"type\":\""), hex("f4908080"), utf8("\"}")),
                        "invalid UTF-8 at byte 9"),
                bytes("3: 0xFF is never UTF-8", CLIENT, concat(utf8("{\"type\":\"x\","), hex("ff"), utf8("}")),
                        "invalid UTF-8 at byte 12"),
                bytes("3: sequence truncated by the frame end", ROUTER, concat(utf8("{\"type\":\"x\"}"), hex("e282")),
                        "invalid UTF-8 at byte 12"),
                bytes("3: UTF-16 is not UTF-8 (zero bytes)", ROUTER, hex("7b002200740079007000650022003a00"),
                        "invalid JSON at byte 1: control character 0x00"),
                bytes("3: byte order mark", ROUTER, concat(hex("efbbbf"), utf8("{\"type\":\"heartbeat\"}")),
                        "invalid JSON at byte 0: byte order mark"),
                bytes("3: raw control character in a string", ROUTER, concat(utf8("{\"type\":\"a"), hex("01"), utf8("\"}")),
                        "invalid JSON at byte 10: control character 0x01"),

                // ---- section 3: JSON syntax -------------------------------------------------------
                json("3: trailing comma", ROUTER, "{\"type\":\"heartbeat\",}",
                        "invalid JSON near byte 20: Unexpected character ('}' (code 125)): was expecting double-quote to start field name"),
                json("3: positions count bytes, not characters", ROUTER, "{\"type\":\"\u00e9\u4e2d\",}",
                        "invalid JSON near byte 16: Unexpected character ('}' (code 125)): was expecting double-quote to start field name"),
                json("3: truncated object", ROUTER, "{\"type\":\"heartbeat\"",
                        "invalid JSON near byte 19: unexpected end of frame"),
                json("3: truncated string", CLIENT, "{\"type\":\"heartb",
                        "invalid JSON near byte 15: unexpected end of frame"),
                json("3: single quotes", ROUTER, "{'type':'heartbeat'}",
                        "invalid JSON near byte 1: Unexpected character (''' (code 39)): was expecting double-quote to start field name"),
                json("3: comment", ROUTER, "{\"type\":\"heartbeat\"/* c */}",
                        "invalid JSON near byte 19: Unexpected character ('/' (code 47)): maybe a (non-standard) comment? (not recognized as one since Feature 'ALLOW_COMMENTS' not enabled for parser)"),
                json("3: NaN", ROUTER, "{\"type\":\"welcome\",\"max_streams\":NaN}",
                        "invalid JSON near byte 35: Non-standard token 'NaN': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow"),
                json("3: leading zero", ROUTER, "{\"type\":\"unsubscribe\",\"stream_id\":017}",
                        "invalid JSON near byte 35: Invalid numeric value: Leading zeroes not allowed"),
                json("3: bare word", ROUTER, "{\"type\":\"heartbeat\",\"x\":yes}",
                        "invalid JSON near byte 24: Unrecognized token 'yes': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"),
                json("3: trailing bytes after the object", ROUTER, "{\"type\":\"heartbeat\"}x",
                        "trailing data after the JSON object at byte 20"),
                json("3: trailing byte positions count bytes", ROUTER, "{\"type\":\"\u00e9\"}x",
                        "trailing data after the JSON object at byte 13"),
                json("3: a second object in the same frame", CLIENT, "{\"type\":\"heartbeat\"} {\"type\":\"heartbeat\"}",
                        "trailing data after the JSON object at byte 21"),
                json("3: trailing bytes after an unknown frame", ROUTER, "{\"type\":\"future\"}]",
                        "trailing data after the JSON object at byte 17"),

                // ---- section 3: one object with a string member type -----------------------------
                json("3: an array", ROUTER, "[{\"type\":\"heartbeat\"}]", "frame is not a JSON object"),
                json("3: a string", ROUTER, "\"heartbeat\"", "frame is not a JSON object"),
                json("3: null", CLIENT, "null", "frame is not a JSON object"),
                json("3: only whitespace", ROUTER, " \n\t", "frame is not a JSON object"),
                json("3: no type", ROUTER, "{}", "missing string member 'type'"),
                json("3: no type, other members", ROUTER, "{\"stream_id\":1,\"target\":{}}", "missing string member 'type'"),
                json("3: type is a number", ROUTER, "{\"type\":7}", "member 'type' is not a string"),
                json("3: type is null", CLIENT, "{\"type\":null}", "member 'type' is not a string"),
                json("3: type not first and an array", ROUTER, "{\"stream_id\":1,\"type\":[\"subscribe\"]}",
                        "member 'type' is not a string"),

                // ---- duplicates and limits (docs/protocol.md, decoding decisions) ---------------------
                json("duplicate type", ROUTER, "{\"type\":\"heartbeat\",\"type\":\"heartbeat\"}",
                        "duplicate member 'type'"),
                json("duplicate type that would change the meaning", ROUTER,
                        "{\"type\":\"heartbeat\",\"type\":\"drain\",\"reason\":\"shutdown\"}",
                        "duplicate member 'type'"),
                json("duplicate inside the target", ROUTER,
                        "{\"type\":\"subscribe\",\"stream_id\":1,\"target\":{\"kind\":\"zmq_tcp\",\"port\":1,\"port\":2}}",
                        "duplicate member 'port'"),
                json("duplicate inside an ignored member", ROUTER, "{\"type\":\"heartbeat\",\"x\":{\"a\":1,\"a\":1}}",
                        "duplicate member 'a'"),
                json("nesting deeper than 16", ROUTER, "{\"type\":\"heartbeat\",\"x\":" + "[".repeat(16) + "]".repeat(16) + "}",
                        "JSON nesting deeper than 16"),
                json("number longer than 64 characters", ROUTER, "{\"type\":\"heartbeat\",\"x\":" + "9".repeat(65) + "}",
                        "JSON number longer than 64 characters"),
                json("member name longer than 1024 characters", ROUTER,
                        "{\"type\":\"heartbeat\",\"" + "n".repeat(1025) + "\":1}",
                        "JSON member name longer than 1024 characters"),

                // ---- which direction may send which type ----------------------------------------------
                json("3.1 frames are not valid from a router", ROUTER, "{\"type\":\"hello\"}",
                        "frame type 'hello' is not valid from a router"),
                json("stream_opened from a router", ROUTER, "{\"type\":\"stream_opened\",\"stream_id\":1}",
                        "frame type 'stream_opened' is not valid from a router"),
                json("draining from a router", ROUTER, "{\"type\":\"draining\",\"deadline_ms\":1}",
                        "frame type 'draining' is not valid from a router"),
                json("3.2 frames are not valid from a client", CLIENT, "{\"type\":\"welcome\"}",
                        "frame type 'welcome' is not valid from a client"),
                json("subscribe from a client", CLIENT, "{\"type\":\"subscribe\",\"stream_id\":1,\"target\":{}}",
                        "frame type 'subscribe' is not valid from a client"),

                // ---- 3.2 subscribe / unsubscribe: stream ids --------------------------------------------
                json("3: subscribe without stream_id", ROUTER, "{\"type\":\"subscribe\",\"target\":{}}",
                        "missing integer member 'subscribe.stream_id'"),
                json("3: stream_id 0", ROUTER, "{\"type\":\"subscribe\",\"stream_id\":0,\"target\":{}}",
                        "subscribe.stream_id 0 out of range 1..2^53-1"),
                json("3: stream_id -1", ROUTER, "{\"type\":\"subscribe\",\"stream_id\":-1}",
                        "subscribe.stream_id -1 out of range 1..2^53-1"),
                json("3: stream_id 2^53", ROUTER, "{\"type\":\"subscribe\",\"stream_id\":9007199254740992}",
                        "subscribe.stream_id 9007199254740992 out of range 1..2^53-1"),
                json("3: stream_id beyond 64 bits", ROUTER, "{\"type\":\"subscribe\",\"stream_id\":99999999999999999999999}",
                        "subscribe.stream_id 99999999999999999999999 out of range 1..2^53-1"),
                json("3: stream_id 1e300", ROUTER, "{\"type\":\"subscribe\",\"stream_id\":1e300}",
                        "subscribe.stream_id 1e300 out of range 1..2^53-1"),
                json("3: stream_id with an exponent beyond 32 bits", ROUTER, "{\"type\":\"subscribe\",\"stream_id\":1e9999999999}",
                        "subscribe.stream_id 1e9999999999 out of range 1..2^53-1"),
                json("3: stream_id with a negative exponent beyond 32 bits", ROUTER, "{\"type\":\"subscribe\",\"stream_id\":1e-9999999999}",
                        "member 'subscribe.stream_id' is not an integer"),
                json("3: stream_id 1e-400", ROUTER, "{\"type\":\"subscribe\",\"stream_id\":1e-400}",
                        "member 'subscribe.stream_id' is not an integer"),
                json("3: stream_id as a string", ROUTER, "{\"type\":\"subscribe\",\"stream_id\":\"17\"}",
                        "member 'subscribe.stream_id' is not an integer"),
                json("3: stream_id 1.5", ROUTER, "{\"type\":\"subscribe\",\"stream_id\":1.5}",
                        "member 'subscribe.stream_id' is not an integer"),
                json("3: stream_id null is absent", ROUTER, "{\"type\":\"subscribe\",\"stream_id\":null}",
                        "missing integer member 'subscribe.stream_id'"),
                json("3: unsubscribe without stream_id", ROUTER, "{\"type\":\"unsubscribe\"}",
                        "missing integer member 'unsubscribe.stream_id'"),
                json("3: unsubscribe stream_id true", ROUTER, "{\"type\":\"unsubscribe\",\"stream_id\":true}",
                        "member 'unsubscribe.stream_id' is not an integer"),

                // ---- 3.2 welcome -------------------------------------------------------------------------
                json("3.2: welcome without protocol_version", ROUTER, "{\"type\":\"welcome\",\"session_id\":\"s\"}",
                        "missing integer member 'welcome.protocol_version'"),
                json("3.2: protocol_version as a string", ROUTER, "{\"type\":\"welcome\",\"protocol_version\":\"1\",\"session_id\":\"s\"}",
                        "member 'welcome.protocol_version' is not an integer"),
                json("3.2: protocol_version 0", ROUTER, "{\"type\":\"welcome\",\"protocol_version\":0,\"session_id\":\"s\"}",
                        "welcome.protocol_version 0 out of range 1..2147483647"),
                json("3.2: protocol_version beyond 32 bits", ROUTER,
                        "{\"type\":\"welcome\",\"protocol_version\":4294967297,\"session_id\":\"s\"}",
                        "welcome.protocol_version 4294967297 out of range 1..2147483647"),
                json("3.2: welcome without session_id", ROUTER, "{\"type\":\"welcome\",\"protocol_version\":1}",
                        "missing string member 'welcome.session_id'"),
                json("3.2: empty session_id", ROUTER, "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"\"}",
                        "welcome.session_id length 0 out of range 1..128"),
                json("3.2: session_id of 129 characters", ROUTER,
                        "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"" + "a".repeat(129) + "\"}",
                        "welcome.session_id length 129 out of range 1..128"),
                json("session_id with a leading space (a header value would lose it)", ROUTER,
                        "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\" abc\"}",
                        "welcome.session_id has leading or trailing whitespace: a header value would lose it"),
                json("session_id with a trailing space", ROUTER,
                        "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"abc \"}",
                        "welcome.session_id has leading or trailing whitespace: a header value would lose it"),
                json("session_id of one space", ROUTER,
                        "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\" \"}",
                        "welcome.session_id has leading or trailing whitespace: a header value would lose it"),
                json("session_id with an escaped CR LF", ROUTER,
                        "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"a\\r\\nb\"}",
                        "welcome.session_id has a control character (U+000D) at index 1: a header value cannot carry it"),
                json("session_id with a TAB", ROUTER,
                        "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"a\\tb\"}",
                        "welcome.session_id has a control character (U+0009) at index 1: a header value cannot carry it"),
                json("session_id with DEL", ROUTER,
                        "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"a\\u007fb\"}",
                        "welcome.session_id has a control character (U+007F) at index 1: a header value cannot carry it"),
                json("session_id with a non-ASCII letter", ROUTER,
                        "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"ab\u00e9\"}",
                        "welcome.session_id has a non-ASCII character at index 2: a header value carries ASCII only"),
                json("3.2: session_id as a number", ROUTER, "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":5}",
                        "member 'welcome.session_id' is not a string"),
                json("3.2: a limit of 1.5", ROUTER,
                        "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"s\",\"heartbeat_interval_ms\":1.5}",
                        "member 'welcome.heartbeat_interval_ms' is not an integer"),
                json("3.2: a limit as a string", ROUTER,
                        "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"s\",\"max_frame_bytes\":\"10\"}",
                        "member 'welcome.max_frame_bytes' is not an integer"),
                json("3.2: a limit as an object", ROUTER,
                        "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"s\",\"max_streams\":{\"n\":1}}",
                        "member 'welcome.max_streams' is not an integer"),

                // ---- 3.2 drain, error ------------------------------------------------------------------
                json("3.2: drain reason as a number", ROUTER, "{\"type\":\"drain\",\"reason\":5}",
                        "member 'drain.reason' is not a string"),
                json("3.2: negative drain deadline", ROUTER, "{\"type\":\"drain\",\"reason\":\"x\",\"deadline_ms\":-1}",
                        "drain.deadline_ms -1 out of range 0..2^63-1"),
                json("3.2: drain deadline as a string", ROUTER, "{\"type\":\"drain\",\"deadline_ms\":\"5000\"}",
                        "member 'drain.deadline_ms' is not an integer"),
                json("3.2: error terminal as a string", ROUTER, "{\"type\":\"error\",\"code\":\"superseded\",\"terminal\":\"true\"}",
                        "member 'error.terminal' is not a boolean"),
                json("3.2: error terminal as 1", ROUTER, "{\"type\":\"error\",\"terminal\":1}",
                        "member 'error.terminal' is not a boolean"),
                json("3.2: error code as a number", ROUTER, "{\"type\":\"error\",\"code\":401}",
                        "member 'error.code' is not a string"),
                json("3.2: error message as an object", ROUTER, "{\"type\":\"error\",\"message\":{}}",
                        "member 'error.message' is not a string"),

                // ---- 3.1 client frames (what the test router checks) ---------------------------------
                json("3.1: hello without role", CLIENT,
                        "{\"type\":\"hello\",\"protocol_versions\":[1],\"client_id\":\"c\",\"kubernetes_namespace\":\"k\",\"dynamo_namespaces\":[]}",
                        "missing string member 'hello.role'"),
                json("3.1: hello without protocol_versions", CLIENT,
                        "{\"type\":\"hello\",\"role\":\"broker\",\"client_id\":\"c\",\"kubernetes_namespace\":\"k\",\"dynamo_namespaces\":[]}",
                        "missing array of integers member 'hello.protocol_versions'"),
                json("3.1: protocol_versions not an array", CLIENT, "{\"type\":\"hello\",\"protocol_versions\":1}",
                        "member 'hello.protocol_versions' is not an array of integers"),
                json("3.1: protocol_versions with a string", CLIENT, "{\"type\":\"hello\",\"protocol_versions\":[1,\"2\"]}",
                        "member 'hello.protocol_versions' is not an array of integers"),
                json("3.1: protocol_versions with 0", CLIENT, "{\"type\":\"hello\",\"protocol_versions\":[1,0]}",
                        "hello.protocol_versions[1] 0 out of range 1..2147483647"),
                json("3.1: dynamo_namespaces with a number", CLIENT,
                        "{\"type\":\"hello\",\"protocol_versions\":[1],\"dynamo_namespaces\":[\"a\",1]}",
                        "member 'hello.dynamo_namespaces' is not an array of strings"),
                json("3.1: agent as a number", CLIENT, "{\"type\":\"hello\",\"agent\":1}",
                        "member 'hello.agent' is not a string"),
                json("3.1: stream_opened without stream_id", CLIENT, "{\"type\":\"stream_opened\"}",
                        "missing integer member 'stream_opened.stream_id'"),
                json("3.1: stream_refused without code", CLIENT, "{\"type\":\"stream_refused\",\"stream_id\":3}",
                        "missing string member 'stream_refused.code'"),
                json("3.1: stream_closed stream_id 0", CLIENT, "{\"type\":\"stream_closed\",\"stream_id\":0,\"code\":\"upstream_closed\"}",
                        "stream_closed.stream_id 0 out of range 1..2^53-1"),
                json("3.1: draining without deadline_ms", CLIENT, "{\"type\":\"draining\"}",
                        "missing integer member 'draining.deadline_ms'"),
                json("3.1: negative draining deadline", CLIENT, "{\"type\":\"draining\",\"deadline_ms\":-5}",
                        "draining.deadline_ms -5 out of range 0..2^63-1"),

                // ---- precedence: document-level errors first, then members in document order ---------
                json("a duplicate beats an earlier mistyped member", ROUTER,
                        "{\"type\":\"subscribe\",\"stream_id\":\"x\",\"stream_id\":1}",
                        "duplicate member 'stream_id'"),
                json("trailing data beats a bad member", ROUTER, "{\"type\":\"subscribe\",\"stream_id\":0} {}",
                        "trailing data after the JSON object at byte 35"),
                json("trailing data beats a type from the wrong direction", ROUTER, "{\"type\":\"hello\"},",
                        "trailing data after the JSON object at byte 16"),
                json("the first bad member in document order wins", ROUTER,
                        "{\"type\":\"welcome\",\"session_id\":\"\",\"protocol_version\":\"1\"}",
                        "welcome.session_id length 0 out of range 1..128"),
                json("a bad member beats a missing one", ROUTER, "{\"type\":\"welcome\",\"session_id\":7}",
                        "member 'welcome.session_id' is not a string"),
                json("type need not be first: same messages", ROUTER,
                        "{\"stream_id\":0,\"target\":{},\"type\":\"subscribe\"}",
                        "subscribe.stream_id 0 out of range 1..2^53-1"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void isAProtocolErrorWithAPreciseMessage(String rule, boolean fromRouter, byte[] input, String message) {
        FrameDecoder<?> decoder = fromRouter ? FrameDecoder.forRouterFrames() : FrameDecoder.forClientFrames();
        ProtocolException e = assertThrows(ProtocolException.class, () -> decoder.decode(input));
        assertEquals(message, e.getMessage());
        assertSame(Code.PROTOCOL_ERROR, e.code());
        assertSame(EndReason.PROTOCOL_ERROR, e.endReason());
        assertTrue(decoder.isFailed());
        assertTrue(decoder.bufferCapacity() <= decoder.maxFrameBytes());
    }

    private static Arguments raw(String rule, boolean fromRouter, byte[] wholeInput, String message) {
        return Arguments.of(rule, fromRouter, wholeInput, message);
    }

    private static Arguments bytes(String rule, boolean fromRouter, byte[] payload, String message) {
        return Arguments.of(rule, fromRouter, FrameCodec.encodePayload(payload), message);
    }

    private static Arguments json(String rule, boolean fromRouter, String payload, String message) {
        return Arguments.of(rule, fromRouter, FrameCodec.encodeJson(payload), message);
    }

    private static byte[] concat(byte[]... parts) {
        return TestFrames.concat(java.util.List.of(parts));
    }

    private static byte[] hex(String hex) {
        return java.util.HexFormat.of().parseHex(hex);
    }
}
