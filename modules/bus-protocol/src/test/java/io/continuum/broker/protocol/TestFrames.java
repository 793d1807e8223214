package io.continuum.broker.protocol;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalLong;

/** Shared fixtures: one sample of every frame, and small byte helpers. */
final class TestFrames {
    private TestFrames() {
    }

    static final Frame.Welcome WELCOME_ALL_LIMITS = new Frame.Welcome(1, "7f3c-session", OptionalLong.of(10_000),
            OptionalLong.of(30_000), OptionalLong.of(1_024), OptionalLong.of(1_048_576), OptionalLong.of(65_536));
    static final Frame.Welcome WELCOME_NO_LIMITS = new Frame.Welcome(1, "s", OptionalLong.empty(),
            OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty());

    /** Every router frame shape, including optional members present and absent. */
    static List<Frame.RouterFrame> routerFrames() {
        return List.of(
                WELCOME_ALL_LIMITS,
                WELCOME_NO_LIMITS,
                Frame.Heartbeat.INSTANCE,
                new Frame.Subscribe(17, new Target.ZmqTcp("dynamo", "10.244.3.7", 5557)),
                new Frame.Subscribe(FrameCodec.MAX_STREAM_ID, new Target.ZmqTcp("dynamo-canary", "fd00::7", 1)),
                new Frame.Subscribe(1, new Target.ZmqTcp("d", "worker-0.dynamo.svc.cluster.local", 65_535)),
                new Frame.Subscribe(2, new Target.AnnouncedSource("kv-listener-3")),
                new Frame.Subscribe(3, new Target.AnnouncedSource(null)),
                new Frame.Unsubscribe(17),
                new Frame.Drain("rebalance", OptionalLong.of(5_000)),
                new Frame.Drain("maintenance", OptionalLong.empty()),
                new Frame.Drain("", OptionalLong.of(0)),
                new Frame.ErrorFrame(Code.SUPERSEDED, "another session took over", true),
                new Frame.ErrorFrame(Code.INTERNAL_ERROR, null, false),
                new Frame.ErrorFrame(Code.UNKNOWN, "unicode \u00e9\u4e2d\uD83D\uDE00", false),
                new Frame.Unknown("router_gossip_v2"));
    }

    /** Every client frame shape. */
    static List<Frame> clientFrames() {
        return List.of(
                new Frame.Hello(List.of(1), "broker", "broker-a", "gpu-serving", List.of("dynamo", "dynamo-canary"),
                        "continuum-event-broker/0.1.0"),
                new Frame.Hello(List.of(1, 2), "broker", "b", "ns", List.of(), null),
                Frame.Heartbeat.INSTANCE,
                new Frame.StreamOpened(17),
                new Frame.StreamRefused(17, Code.TARGET_NOT_ALLOWED, "10.0.0.1 rejected by the address filter"),
                new Frame.StreamRefused(FrameCodec.MAX_STREAM_ID, Code.DRAINING, null),
                new Frame.StreamClosed(17, Code.UPSTREAM_CLOSED),
                new Frame.StreamClosed(1, Code.BUFFER_OVERFLOW),
                new Frame.Draining(25_000),
                new Frame.Draining(0),
                new Frame.Unknown("client_metrics"));
    }

    static byte[] concat(List<byte[]> parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        parts.forEach(out::writeBytes);
        return out.toByteArray();
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] prefix(long length) {
        return new byte[]{(byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length};
    }

    static String payloadOf(byte[] frame) {
        return new String(frame, 4, frame.length - 4, StandardCharsets.UTF_8);
    }
}
