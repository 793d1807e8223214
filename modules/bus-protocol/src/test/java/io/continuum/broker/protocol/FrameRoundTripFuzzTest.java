package io.continuum.broker.protocol;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Coverage-guided encode-then-decode of generated frames (bus-protocol-v1.md section 3; docs/reliability.md, "Fuzzing").
 * The fuzzer picks a frame of either direction with arbitrary member values. Contract:
 * <ul>
 *     <li>{@link FrameCodec#encode} either returns bytes or refuses the frame with the one
 *     {@link IllegalArgumentException} it documents;</li>
 *     <li>encoded bytes, cut in two at a fuzzer-chosen point, decode through {@link FrameDecoder}
 *     (at the 1 MiB ceiling) to exactly that frame (its {@code message} truncated to 256
 *     characters, as the encoder promises), and never to a {@link ProtocolException};</li>
 *     <li>re-encoding the decoded frame gives the same bytes.</li>
 * </ul>
 * Inputs: {@code src/test/resources/io/continuum/broker/protocol/FrameRoundTripFuzzTestInputs/roundTrip/}.
 */
class FrameRoundTripFuzzTest {

    @FuzzTest(maxDuration = "10s")
    void roundTrip(FuzzedDataProvider data) throws ProtocolException {
        int cut = data.consumeInt(0, Integer.MAX_VALUE);
        boolean routerSideForEither = data.consumeBoolean();
        Frame frame = frame(data);
        byte[] bytes;
        try {
            bytes = FrameCodec.encode(frame);
        } catch (IllegalArgumentException refused) {
            return; // documented refusal: the frame breaks a rule the decoder enforces
        }
        boolean fromRouter = switch (frame) {
            case Frame.Heartbeat _, Frame.Unknown _ -> routerSideForEither; // both directions send these
            case Frame.RouterFrame _ -> true;
            default -> false;
        };
        FrameDecoder<? extends Frame> decoder = fromRouter ? FrameDecoder.forRouterFrames()
                : FrameDecoder.forClientFrames();
        decoder.setMaxFrameBytes(SessionLimits.MAX_FRAME_BYTES_CEILING);
        int at = cut % (bytes.length + 1);
        List<Frame> decoded = new ArrayList<>(decoder.decode(ByteBuffer.wrap(bytes, 0, at)));
        decoded.addAll(decoder.decode(ByteBuffer.wrap(bytes, at, bytes.length - at)));
        assertFalse(decoder.hasPartialFrame());

        assertEquals(List.of(expected(frame)), decoded);
        assertArrayEquals(bytes, FrameCodec.encode(decoded.getFirst()), "re-encoding is stable");
    }

    /** What the decoder must return for {@code frame}: the encoder truncates messages. */
    private static Frame expected(Frame frame) {
        return switch (frame) {
            case Frame.StreamRefused r -> new Frame.StreamRefused(r.streamId(), r.code(),
                    FrameCodec.truncateMessage(r.message()));
            case Frame.ErrorFrame e -> new Frame.ErrorFrame(e.code(), FrameCodec.truncateMessage(e.message()),
                    e.terminal());
            default -> frame;
        };
    }

    private static final String[] NAMES = {"welcome", "heartbeat", "subscribe", "unsubscribe", "drain", "error",
            "hello", "stream_opened", "stream_refused", "stream_closed", "draining"};

    private static Frame frame(FuzzedDataProvider data) {
        return switch (data.consumeInt(0, 11)) {
            case 0 -> new Frame.Welcome(data.consumeInt(), string(data, 160), optionalLong(data), optionalLong(data),
                    optionalLong(data), optionalLong(data), optionalLong(data));
            case 1 -> Frame.Heartbeat.INSTANCE;
            case 2 -> new Frame.Subscribe(streamId(data), target(data));
            case 3 -> new Frame.Unsubscribe(streamId(data));
            case 4 -> new Frame.Drain(string(data, 64), optionalLong(data));
            case 5 -> new Frame.ErrorFrame(code(data), nullableString(data, 600), data.consumeBoolean());
            case 6 -> new Frame.Hello(ints(data), string(data, 32), string(data, 64), string(data, 64),
                    strings(data), nullableString(data, 64));
            case 7 -> new Frame.StreamOpened(streamId(data));
            case 8 -> new Frame.StreamRefused(streamId(data), code(data), nullableString(data, 600));
            case 9 -> new Frame.StreamClosed(streamId(data), code(data));
            case 10 -> new Frame.Draining(data.consumeLong());
            default -> new Frame.Unknown(data.consumeBoolean() ? data.pickValue(NAMES) + data.consumeString(4)
                    : string(data, 40));
        };
    }

    private static Target target(FuzzedDataProvider data) {
        return switch (data.consumeInt(0, 3)) {
            case 0 -> new Target.AnnouncedSource(nullableString(data, 64));
            case 1 -> new Target.Unsupported(nullableString(data, 16), "fuzz");
            default -> new Target.ZmqTcp(string(data, 64), string(data, 300), data.consumeInt(-1, 70_000));
        };
    }

    private static long streamId(FuzzedDataProvider data) {
        return data.consumeBoolean() ? data.consumeLong(-1, FrameCodec.MAX_STREAM_ID + 1) : data.consumeLong();
    }

    private static Code code(FuzzedDataProvider data) {
        return data.pickValue(Code.values());
    }

    private static OptionalLong optionalLong(FuzzedDataProvider data) {
        return data.consumeBoolean() ? OptionalLong.of(data.consumeLong()) : OptionalLong.empty();
    }

    private static String string(FuzzedDataProvider data, int max) {
        return data.consumeString(max);
    }

    private static String nullableString(FuzzedDataProvider data, int max) {
        return data.consumeBoolean() ? null : data.consumeString(max);
    }

    private static List<Integer> ints(FuzzedDataProvider data) {
        List<Integer> out = new ArrayList<>();
        int n = data.consumeInt(0, 4);
        for (int i = 0; i < n; i++) {
            out.add(data.consumeInt());
        }
        return out;
    }

    private static List<String> strings(FuzzedDataProvider data) {
        List<String> out = new ArrayList<>();
        int n = data.consumeInt(0, 4);
        for (int i = 0; i < n; i++) {
            out.add(data.consumeString(64));
        }
        return out;
    }
}
