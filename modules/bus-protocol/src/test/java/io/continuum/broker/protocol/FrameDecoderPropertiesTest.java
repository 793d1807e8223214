package io.continuum.broker.protocol;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static io.continuum.broker.protocol.TestFrames.concat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * bus-protocol-v1.md section 3 against hostile input: whatever the bytes, the decoder returns
 * frames or throws {@link ProtocolException} (never anything else), never holds a buffer above
 * the limit, and its result does not depend on how the bytes were split.
 *
 * <p>Every property has a fixed seed: the test command gives the same result on every run, and a
 * different seed is tried by editing it, never by chance; exploring is bench/fuzz.sh's job.
 */
class FrameDecoderPropertiesTest {
    private static final List<String> NAMES = List.of("type", "stream_id", "target", "kind", "namespace", "host",
            "port", "source_id", "protocol_version", "session_id", "heartbeat_interval_ms", "idle_timeout_ms",
            "max_streams", "max_stream_buffer_bytes", "max_frame_bytes", "reason", "deadline_ms", "code", "message",
            "terminal", "protocol_versions", "role", "client_id", "kubernetes_namespace", "dynamo_namespaces", "agent", "x");
    private static final List<String> TYPES = List.of("welcome", "heartbeat", "subscribe", "unsubscribe", "drain",
            "error", "hello", "stream_opened", "stream_refused", "stream_closed", "draining", "other", "");
    private static final List<String> SCALARS = List.of("0", "1", "-1", "17", "17.0", "1.5", "1e3", "1e400", "1e9999999999", "-2E+9999999999", "1e-9999999999",
            "0e99999999999", "-0",
            "9007199254740991", "9007199254740992", "99999999999999999999999", "true", "false", "null", "\"\"", "\"s\"",
            "\"zmq_tcp\"", "\"announced_source\"", "\"10.0.0.1\"", "\"a b\"", "\"\\u0000\"", "\"\\ud800\"", "[]", "{}", "[1]",
            "[\"a\"]");

    @Property(tries = 1500, seed = "20261201")
    void randomBytesOnlyEverYieldFramesOrAProtocolError(@ForAll @Size(max = 200) byte[] bytes,
                                                        @ForAll @IntRange(min = 1, max = 64) int chunk,
                                                        @ForAll boolean fromRouter) {
        checkAllSplits(bytes, chunk, fromRouter);
    }

    @Property(tries = 1500, seed = "20261202")
    void mutatedValidStreamsOnlyEverYieldFramesOrAProtocolError(@ForAll("validStreams") byte[] valid,
                                                                @ForAll long seed,
                                                                @ForAll @IntRange(min = 1, max = 6) int mutations,
                                                                @ForAll @IntRange(min = 1, max = 64) int chunk) {
        byte[] mutated = mutate(valid, new Random(seed), mutations);
        checkAllSplits(mutated, chunk, true);
        checkAllSplits(mutated, chunk, false);
    }

    @Property(tries = 2000, seed = "20261203")
    void randomObjectsOfKnownMembersOnlyEverYieldFramesOrAProtocolError(@ForAll("randomObjects") String json,
                                                                      @ForAll boolean fromRouter) {
        checkAllSplits(FrameCodec.encodeJson(json), 7, fromRouter);
    }

    @Property(tries = 3000, seed = "20261204")
    void frameShapedObjectsOnlyEverYieldFramesOrAProtocolError(@ForAll("frameShaped") String json,
                                                               @ForAll @IntRange(min = 1, max = 16) int chunk) {
        byte[] frame = FrameCodec.encodeJson(json);
        checkAllSplits(frame, chunk, true);
        checkAllSplits(frame, chunk, false);
    }

    /** The generator above is only worth its tries if it reaches every frame type of both directions. */
    @net.jqwik.api.Example
    void frameShapedObjectsReachEveryFrameTypeInBothDirections() {
        Random random = new Random(20_261_129L);
        java.util.Set<Class<?>> seen = new java.util.HashSet<>();
        int ok = 0;
        for (int i = 0; i < 3000; i++) {
            byte[] payload = TestFrames.utf8(FrameShapedJson.next(random));
            try {
                seen.add(FrameCodec.decodeRouterFrame(payload).getClass());
                ok++;
            } catch (ProtocolException routerSide) {
                try {
                    seen.add(FrameCodec.decodeClientFrame(payload).getClass());
                    ok++;
                } catch (ProtocolException clientSide) {
                    // malformed for both: fine, that is half the point
                }
            }
        }
        assertEquals(java.util.Set.of(Frame.Welcome.class, Frame.Heartbeat.class, Frame.Subscribe.class,
                Frame.Unsubscribe.class, Frame.Drain.class, Frame.ErrorFrame.class, Frame.Unknown.class, Frame.Hello.class,
                Frame.StreamOpened.class, Frame.StreamRefused.class, Frame.StreamClosed.class, Frame.Draining.class), seen);
        assertTrue(ok > 300, "only " + ok + " of 3000 generated objects decoded");
    }

    @Property(tries = 300, seed = "20261205")
    void validStreamsDecodeToTheirFramesWhateverTheSplit(@ForAll("routerFrameLists") List<Frame.RouterFrame> frames,
                                                        @ForAll @IntRange(min = 1, max = 40) int chunk) throws ProtocolException {
        byte[] stream = concat(frames.stream().map(FrameCodec::encode).toList());
        FrameDecoder<Frame.RouterFrame> decoder = FrameDecoder.forRouterFrames();
        List<Frame.RouterFrame> out = new ArrayList<>();
        for (int i = 0; i < stream.length; i += chunk) {
            decoder.decode(ByteBuffer.wrap(stream, i, Math.min(chunk, stream.length - i)), out::add);
        }
        assertEquals(frames, out);
    }

    /** Feeds the bytes whole and in chunks; both must agree, and only ProtocolException may escape. */
    private static void checkAllSplits(byte[] bytes, int chunk, boolean fromRouter) {
        Outcome whole = run(bytes, bytes.length == 0 ? 1 : bytes.length, fromRouter);
        Outcome split = run(bytes, chunk, fromRouter);
        Outcome single = run(bytes, 1, fromRouter);
        assertEquals(whole, split, "split into " + chunk + "-byte chunks");
        assertEquals(whole, single, "split into single bytes");
    }

    private record Outcome(List<Frame> frames, String error) {
    }

    private static Outcome run(byte[] bytes, int chunk, boolean fromRouter) {
        FrameDecoder<? extends Frame> decoder = fromRouter ? FrameDecoder.forRouterFrames() : FrameDecoder.forClientFrames();
        List<Frame> frames = new ArrayList<>();
        try {
            for (int i = 0; i < bytes.length; i += chunk) {
                decoder.decode(ByteBuffer.wrap(bytes, i, Math.min(chunk, bytes.length - i)), frames::add);
                assertTrue(decoder.bufferCapacity() <= decoder.maxFrameBytes(), "buffer above the limit");
            }
            return new Outcome(frames, null);
        } catch (ProtocolException e) {
            assertTrue(decoder.bufferCapacity() <= decoder.maxFrameBytes(), "buffer above the limit");
            assertTrue(decoder.isFailed());
            return new Outcome(frames, e.getMessage());
        }
        // any other exception propagates and fails the property
    }

    private static byte[] mutate(byte[] valid, Random random, int mutations) {
        byte[] b = valid.clone();
        byte[] interesting = {0, 1, '"', '{', '}', '[', ']', ',', ':', '\\', '-', '.', 'e', '0', '9', ' ',
                (byte) 0x7F, (byte) 0x80, (byte) 0xC0, (byte) 0xED, (byte) 0xF4, (byte) 0xFF};
        for (int m = 0; m < mutations && b.length > 0; m++) {
            int at = random.nextInt(b.length);
            switch (random.nextInt(4)) {
                case 0 -> b[at] = (byte) random.nextInt(256);
                case 1 -> b[at] = interesting[random.nextInt(interesting.length)];
                case 2 -> {
                    byte[] shorter = new byte[b.length - 1];
                    System.arraycopy(b, 0, shorter, 0, at);
                    System.arraycopy(b, at + 1, shorter, at, b.length - at - 1);
                    b = shorter;
                }
                default -> {
                    byte[] longer = new byte[b.length + 1];
                    System.arraycopy(b, 0, longer, 0, at);
                    longer[at] = interesting[random.nextInt(interesting.length)];
                    System.arraycopy(b, at, longer, at + 1, b.length - at);
                    b = longer;
                }
            }
        }
        return b;
    }

    @Provide
    Arbitrary<byte[]> validStreams() {
        List<byte[]> encoded = new ArrayList<>();
        TestFrames.routerFrames().forEach(f -> encoded.add(FrameCodec.encode(f)));
        TestFrames.clientFrames().forEach(f -> encoded.add(FrameCodec.encode(f)));
        return Arbitraries.of(encoded).list().ofMinSize(1).ofMaxSize(4).map(TestFrames::concat);
    }

    @Provide
    Arbitrary<String> frameShaped() {
        return Arbitraries.randomValue(FrameShapedJson::next);
    }

    @Provide
    Arbitrary<List<Frame.RouterFrame>> routerFrameLists() {
        return Arbitraries.of(TestFrames.routerFrames()).list().ofMaxSize(12);
    }

    @Provide
    Arbitrary<String> randomObjects() {
        Arbitrary<String> value = Arbitraries.lazyOf(
                () -> Arbitraries.of(SCALARS),
                () -> Arbitraries.of(TYPES).map(t -> "\"" + t + "\""),
                () -> member().list().ofMaxSize(5).map(FrameDecoderPropertiesTest::object));
        Arbitrary<String> typeMember = Arbitraries.of(TYPES).map(t -> "\"type\":\"" + t + "\"");
        Arbitrary<List<String>> members = Arbitraries.of(NAMES).flatMap(n -> value.map(v -> "\"" + n + "\":" + v))
                .list().ofMaxSize(8);
        return Arbitraries.oneOf(
                typeMember.flatMap(t -> members.map(ms -> {
                    List<String> all = new ArrayList<>(ms);
                    all.addFirst(t);
                    return object(all);
                })),
                members.map(FrameDecoderPropertiesTest::object));
    }

    private Arbitrary<String> member() {
        return Arbitraries.of(NAMES).flatMap(n -> Arbitraries.of(SCALARS).map(v -> "\"" + n + "\":" + v));
    }

    private static String object(List<String> members) {
        return "{" + String.join(",", members) + "}";
    }
}
