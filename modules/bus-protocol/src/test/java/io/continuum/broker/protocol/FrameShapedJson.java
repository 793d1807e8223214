package io.continuum.broker.protocol;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Generates JSON objects shaped like frames: a known (or unknown) type with its own members, each
 * present or absent, valid or replaced by a hostile value, in any order. Reaches every branch of
 * the member readers far more often than uniformly random JSON does.
 */
final class FrameShapedJson {
    static final List<String> HOSTILE = List.of("0", "-1", "1.5", "1e3", "17.0", "1e400", "1e9999999999",
            "1e-9999999999", "-0", "9007199254740992", "99999999999999999999999", "true", "false", "null", "\"\"",
            "\"s\"", "\"a b\"", "\"\\u0000\"", "\"\\ud800\"", "\"[::1]\"", "[]", "{}", "[1,\"a\"]", "{\"k\":[{}]}",
            "\"" + "h".repeat(254) + "\"", "[" + "[".repeat(14) + "]".repeat(14) + "]");

    private static final Map<String, List<String>> MEMBERS = Map.ofEntries(
            Map.entry("welcome", List.of("protocol_version", "session_id", "heartbeat_interval_ms", "idle_timeout_ms",
                    "max_streams", "max_stream_buffer_bytes", "max_frame_bytes")),
            Map.entry("heartbeat", List.of()),
            Map.entry("subscribe", List.of("stream_id", "target")),
            Map.entry("unsubscribe", List.of("stream_id")),
            Map.entry("drain", List.of("reason", "deadline_ms")),
            Map.entry("error", List.of("code", "message", "terminal")),
            Map.entry("hello", List.of("protocol_versions", "role", "client_id", "kubernetes_namespace",
                    "dynamo_namespaces", "agent")),
            Map.entry("stream_opened", List.of("stream_id")),
            Map.entry("stream_refused", List.of("stream_id", "code", "message")),
            Map.entry("stream_closed", List.of("stream_id", "code")),
            Map.entry("draining", List.of("deadline_ms")),
            Map.entry("future_type", List.of("stream_id", "x")));
    private static final List<String> TYPES = List.copyOf(MEMBERS.keySet().stream().sorted().toList());

    private static final Map<String, String> VALID = Map.ofEntries(
            Map.entry("stream_id", "17"), Map.entry("protocol_version", "1"), Map.entry("session_id", "\"sess-1\""),
            Map.entry("heartbeat_interval_ms", "1000"), Map.entry("idle_timeout_ms", "5000"),
            Map.entry("max_streams", "8"), Map.entry("max_stream_buffer_bytes", "65536"),
            Map.entry("max_frame_bytes", "8192"), Map.entry("reason", "\"rebalance\""), Map.entry("deadline_ms", "5000"),
            Map.entry("code", "\"superseded\""), Map.entry("message", "\"m\""), Map.entry("terminal", "true"),
            Map.entry("protocol_versions", "[1]"), Map.entry("role", "\"broker\""), Map.entry("client_id", "\"c\""),
            Map.entry("kubernetes_namespace", "\"k\""), Map.entry("dynamo_namespaces", "[\"d\"]"),
            Map.entry("agent", "\"a\""), Map.entry("x", "1"), Map.entry("namespace", "\"d\""),
            Map.entry("host", "\"10.0.0.1\""), Map.entry("port", "5557"), Map.entry("source_id", "\"src\""));

    private FrameShapedJson() {
    }

    static String next(Random random) {
        String type = TYPES.get(random.nextInt(TYPES.size()));
        List<String> members = new ArrayList<>();
        members.add("\"type\":" + (random.nextInt(20) == 0 ? pick(random, HOSTILE) : "\"" + type + "\""));
        for (String name : MEMBERS.get(type)) {
            if (random.nextInt(10) < 8) {
                members.add("\"" + name + "\":" + value(random, name));
            }
        }
        if (random.nextInt(4) == 0) {
            members.add("\"unknown_member\":" + pick(random, HOSTILE));
        }
        if (random.nextInt(5) == 0) {
            Collections.shuffle(members, random);
        }
        return "{" + String.join(",", members) + "}";
    }

    private static String value(Random random, String name) {
        if (name.equals("target")) {
            return random.nextInt(10) == 0 ? pick(random, HOSTILE) : target(random);
        }
        return random.nextInt(10) < 7 ? VALID.get(name) : pick(random, HOSTILE);
    }

    private static String target(Random random) {
        List<String> members = new ArrayList<>();
        String kind = switch (random.nextInt(6)) {
            case 0 -> "\"announced_source\"";
            case 1 -> "\"ipc\"";
            case 2 -> pick(random, HOSTILE);
            default -> "\"zmq_tcp\"";
        };
        if (random.nextInt(10) < 9) {
            members.add("\"kind\":" + kind);
        }
        for (String name : List.of("namespace", "host", "port", "source_id")) {
            if (random.nextInt(10) < 8) {
                members.add("\"" + name + "\":" + (random.nextInt(10) < 7 ? VALID.get(name) : pick(random, HOSTILE)));
            }
        }
        Collections.shuffle(members, random);
        return "{" + String.join(",", members) + "}";
    }

    private static String pick(Random random, List<String> values) {
        return values.get(random.nextInt(values.size()));
    }
}
