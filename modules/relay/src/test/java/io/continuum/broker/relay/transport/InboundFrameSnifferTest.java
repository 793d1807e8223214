package io.continuum.broker.relay.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * The sniffer as a filter: what Helidon reads is the inbound byte stream less the DATA frames refused, however
 * the socket's reads cut it, and a frame is never half passed. The events are the same for every cut.
 */
class InboundFrameSnifferTest {
    private static final int REFUSED = 5;

    /** The frames, and the stream less the refused DATA (the one Helidon must read). */
    private static final byte[][] FRAMES = {
        frame(Http2Frames.TYPE_HEADERS, Http2Frames.FLAG_END_HEADERS, 1, new byte[] {(byte) 0x88}),
        frame(Http2Frames.TYPE_DATA, 0, REFUSED, bytes(40, 7)),
        frame(Http2Frames.TYPE_DATA, 0, 1, bytes(30, 3)),
        frame(Http2Frames.TYPE_DATA, Http2Frames.FLAG_END_STREAM, REFUSED, new byte[0]),
        frame(Http2Frames.TYPE_WINDOW_UPDATE, 0, 0, new byte[] {0, 0, 1, 0}),
        frame(Http2Frames.TYPE_DATA, Http2Frames.FLAG_END_STREAM, 1, bytes(12, 9)),
    };

    @Test
    void everyTwoReadCutPassesTheSameBytesAndEvents() {
        byte[] wire = concat(FRAMES);
        byte[] expected = concat(FRAMES[0], FRAMES[2], FRAMES[4], FRAMES[5]);
        List<String> expectedEvents = null;
        for (int cut = 0; cut <= wire.length; cut++) {
            Recorder events = new Recorder(Set.of(REFUSED));
            InboundFrameSniffer sniffer = new InboundFrameSniffer(events);
            ByteArrayOutputStream passed = new ByteArrayOutputStream();
            passed.writeBytes(sniffer.filter(slice(wire, 0, cut), cut));
            byte[] rest = slice(wire, cut, wire.length);
            passed.writeBytes(sniffer.filter(rest, rest.length));
            assertArrayEquals(expected, passed.toByteArray(), "cut at " + cut);
            if (expectedEvents == null) {
                expectedEvents = events.seen;
            }
            assertEquals(expectedEvents, events.seen, "cut at " + cut);
        }
        assertEquals(List.of("headers 1", "admit? 5", "dropped 5 40", "admit? 1", "data 1 30 false", "admit? 5",
                "dropped 5 0", "window 0 256", "admit? 1", "data 1 12 true"), expectedEvents);
    }

    @Test
    void byteByByteReadsPassTheSameBytes() {
        byte[] wire = concat(FRAMES);
        InboundFrameSniffer sniffer = new InboundFrameSniffer(new Recorder(Set.of(REFUSED)));
        ByteArrayOutputStream passed = new ByteArrayOutputStream();
        for (byte b : wire) {
            byte[] out = sniffer.filter(new byte[] {b, 42}, 1); // the buffer's tail beyond the read is not input
            passed.writeBytes(out);
        }
        assertArrayEquals(concat(FRAMES[0], FRAMES[2], FRAMES[4], FRAMES[5]), passed.toByteArray());
    }

    @Test
    void aReadEndingInsideAFrameHeaderHoldsTheHeaderBackUntilItIsWhole() {
        InboundFrameSniffer sniffer = new InboundFrameSniffer(new Recorder(Set.of()));
        byte[] data = frame(Http2Frames.TYPE_DATA, 0, 1, bytes(20, 1));
        byte[] wire = concat(FRAMES[0], data);
        int cut = FRAMES[0].length + 4;
        assertArrayEquals(FRAMES[0], sniffer.filter(wire, cut), "the DATA's first header bytes are held");
        byte[] rest = slice(wire, cut, wire.length);
        assertArrayEquals(data, sniffer.filter(rest, rest.length));
    }

    /**
     * A DATA frame inside an open header block (between HEADERS without END_HEADERS and its CONTINUATION), or on
     * stream 0, is a connection error in HTTP/2: it is not the listener's to refuse, Helidon reports it.
     */
    @Test
    void dataThatOnlyAConnectionErrorCanAnswerIsNeverOfferedForRefusal() {
        Recorder events = new Recorder(Set.of(1, 0));
        InboundFrameSniffer sniffer = new InboundFrameSniffer(events);
        byte[] wire = concat(
                frame(Http2Frames.TYPE_HEADERS, 0, 1, new byte[] {(byte) 0x88}),
                frame(Http2Frames.TYPE_DATA, 0, 1, bytes(3, 1)),
                frame(Http2Frames.TYPE_CONTINUATION, Http2Frames.FLAG_END_HEADERS, 1, new byte[0]),
                frame(Http2Frames.TYPE_DATA, 0, 0, bytes(2, 1)));
        assertArrayEquals(wire, sniffer.filter(wire, wire.length));
        assertEquals(List.of("data 1 3 false", "headers 1", "data 0 2 false"), events.seen);
    }

    private static final class Recorder implements InboundFrameSniffer.Listener {
        final List<String> seen = new ArrayList<>();
        private final Set<Integer> refuse;

        Recorder(Set<Integer> refuse) {
            this.refuse = refuse;
        }

        @Override
        public void settings(List<long[]> settings) {
            seen.add("settings " + settings.size());
        }

        @Override
        public void windowUpdate(int streamId, int increment) {
            seen.add("window " + streamId + " " + increment);
        }

        @Override
        public void pingAck(long opaque) {
            seen.add("ping ack");
        }

        @Override
        public void goAway(int lastStreamId, long errorCode) {
            seen.add("goaway");
        }

        @Override
        public void rstStream(int streamId, long errorCode) {
            seen.add("rst " + streamId);
        }

        @Override
        public void data(int streamId, int length, boolean endStream) {
            seen.add("data " + streamId + " " + length + " " + endStream);
        }

        @Override
        public void headers(int streamId, boolean endStream) {
            seen.add("headers " + streamId);
        }

        @Override
        public boolean admitData(int streamId) {
            seen.add("admit? " + streamId);
            return !refuse.contains(streamId);
        }

        @Override
        public void dataDropped(int streamId, int length) {
            seen.add("dropped " + streamId + " " + length);
        }
    }

    private static byte[] frame(int type, int flags, int streamId, byte[] payload) {
        byte[] f = new byte[Http2Frames.HEADER_LENGTH + payload.length];
        Http2Frames.writeHeader(f, payload.length, type, flags, streamId);
        System.arraycopy(payload, 0, f, Http2Frames.HEADER_LENGTH, payload.length);
        return f;
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed * 31 + i);
        }
        return b;
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            all.writeBytes(p);
        }
        return all.toByteArray();
    }

    private static byte[] slice(byte[] b, int from, int to) {
        byte[] s = new byte[to - from];
        System.arraycopy(b, from, s, 0, s.length);
        return s;
    }
}
