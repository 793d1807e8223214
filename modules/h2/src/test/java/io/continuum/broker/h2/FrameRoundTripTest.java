package io.continuum.broker.h2;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** What the writer writes, the reader reads back: every frame type, and header blocks larger than one frame. */
class FrameRoundTripTest {
    private final ByteArrayOutputStream wire = new ByteArrayOutputStream();
    private final Http2Writer writer = new Http2Writer(wire);
    private final Recorder seen = new Recorder();

    @Test
    void everyFrameTypeComesBackAsWritten() throws Exception {
        Map<Integer, Long> settings = new LinkedHashMap<>();
        settings.put(0x3, 100L);
        settings.put(0x4, 1L << 20);
        writer.settings(settings);
        writer.settingsAck();
        writer.ping(false, 42);
        writer.ping(true, 42);
        writer.headers(1, false, List.of(new HeaderField(":method", "POST"), new HeaderField(":scheme", "https"),
                new HeaderField(":authority", "router.example.com"), new HeaderField(":path", "/bus/v1/session"),
                new HeaderField("content-type", "application/x-continuum-bus")));
        writer.data(1, false, bytes("hello"), 0, 5);
        writer.data(1, true, new byte[0], 0, 0);
        writer.windowUpdate(0, 1000);
        writer.windowUpdate(1, 5);
        writer.rstStream(3, 8);
        writer.goAway(7, 0, bytes("bye"));
        writer.frame(0xB, 0, 0, new byte[] {1, 2});
        writer.flush();

        readAll();
        assertEquals(List.of("SETTINGS {3=100, 4=1048576}", "SETTINGS ACK", "PING 42", "PING ACK 42",
                "HEADERS 1 5 fields", "DATA 1 hello (5)", "DATA 1 END_STREAM  (0)", "WINDOW_UPDATE 0 1000",
                "WINDOW_UPDATE 1 5", "RST_STREAM 3 8", "GOAWAY 7 0 bye", "UNKNOWN 11 0 [1, 2]"), seen.frames);
        assertEquals(List.of(new HeaderField(":method", "POST"), new HeaderField(":scheme", "https"),
                new HeaderField(":authority", "router.example.com"), new HeaderField(":path", "/bus/v1/session"),
                new HeaderField("content-type", "application/x-continuum-bus")), seen.headerBlocks.get(0));
    }

    @Test
    void aResponseHeadComesBackWithItsStatus() throws Exception {
        writer.headers(1, true, List.of(new HeaderField(":status", "404"), new HeaderField("retry-after", "5")));
        writer.flush();
        readAll();
        assertEquals(List.of(new HeaderField(":status", "404"), new HeaderField("retry-after", "5")),
                seen.headerBlocks.get(0));
        assertEquals(List.of("HEADERS 1 END_STREAM 2 fields"), seen.frames);
    }

    @Test
    void aHeaderBlockLargerThanOneFrameGoesAsHeadersAndContinuations() throws Exception {
        List<HeaderField> fields = new ArrayList<>();
        fields.add(new HeaderField(":status", "200"));
        for (int i = 0; i < 40; i++) {
            fields.add(new HeaderField("x-large-" + i, "v".repeat(1_000) + i));
        }
        writer.headers(3, false, fields);
        writer.flush();

        List<Integer> types = frameTypes(wire.toByteArray());
        assertEquals(0x1, types.get(0));
        assertFalse(types.size() < 3, "40 KB of fields need CONTINUATIONs after a 16 KiB HEADERS: " + types);
        types.subList(1, types.size()).forEach(t -> assertEquals(0x9, t));
        readAll();
        assertEquals(List.of("HEADERS 3 41 fields"), seen.frames);
        assertEquals(sorted(fields), sorted(seen.headerBlocks.get(0)));
    }

    @Test
    void dataLargerThanThePeersMaximumFrameSizeIsSplitAndEndsOnTheLast() throws Exception {
        byte[] big = new byte[40_000];
        java.util.Arrays.fill(big, (byte) 'x');
        writer.data(5, true, big, 0, big.length);
        writer.flush();
        assertEquals(List.of(0x0, 0x0, 0x0), frameTypes(wire.toByteArray()));
        readAll();
        assertEquals(3, seen.frames.size());
        assertEquals("DATA 5 END_STREAM " + "x".repeat(40_000 - 2 * 16_384) + " (" + (40_000 - 2 * 16_384) + ")",
                seen.frames.get(2));
    }

    @Test
    void dataFromADirectBufferIsSplitLikeAnArraysAndMovesItsPositionPastWhatWasWritten() throws Exception {
        java.nio.ByteBuffer direct = java.nio.ByteBuffer.allocateDirect(40_010);
        for (int i = 0; i < 40_010; i++) {
            direct.put((byte) (i < 40_000 ? 'x' : 'y'));
        }
        direct.flip();
        writer.data(5, true, direct, 40_000);
        assertEquals(40_000, direct.position(), "the bytes after the length stay for the caller");
        writer.flush();
        assertEquals(List.of(0x0, 0x0, 0x0), frameTypes(wire.toByteArray()));
        readAll();
        assertEquals("DATA 5 END_STREAM " + "x".repeat(40_000 - 2 * 16_384) + " (" + (40_000 - 2 * 16_384) + ")",
                seen.frames.get(2));
        assertThrows(IndexOutOfBoundsException.class, () -> writer.data(5, false, direct, 11),
                "no more than remains");
    }

    @Test
    void theEncoderFollowsThePeersHeaderTableSizeAndSaysSo() throws Exception {
        List<HeaderField> fields = List.of(new HeaderField(":status", "200"),
                new HeaderField("x-repeated", "a value the dynamic table would index"));
        writer.headers(1, false, fields);
        writer.applyPeerSettings(Map.of(0x1, 0L)); // the peer allows no dynamic table
        writer.headers(3, false, fields);
        writer.headers(5, false, fields);
        writer.flush();
        readAll();
        assertEquals(List.of(fields, fields, fields), seen.headerBlocks);
    }

    @Test
    void aFieldOfTheStaticTableIsOneByte() throws Exception {
        writer.headers(1, false, List.of(new HeaderField(":status", "200")));
        writer.flush();
        assertArrayEquals(new byte[] {0, 0, 1, 0x1, 0x4, 0, 0, 0, 1, (byte) 0x88}, wire.toByteArray());
    }

    @Test
    void aRepeatedFieldGoesAsAnIndexIntoTheDynamicTable() throws Exception {
        HeaderField session = new HeaderField("continuum-session-id", "0123456789abcdef");
        writer.headers(1, false, List.of(new HeaderField(":status", "200"), session));
        writer.flush();
        int first = wire.size();
        writer.headers(3, false, List.of(new HeaderField(":status", "200"), session));
        writer.flush();
        byte[] bytes = wire.toByteArray();
        assertEquals(9 + 2, bytes.length - first, "the second block is two indexes: 0x88 and 0xBE");
        assertEquals((byte) 0xBE, bytes[bytes.length - 1]);
        readAll();
        assertEquals(List.of(List.of(new HeaderField(":status", "200"), session),
                List.of(new HeaderField(":status", "200"), session)), seen.headerBlocks);
    }

    @Test
    void aSensitiveFieldIsNeverIndexedAndReadBackSensitive() throws Exception {
        HeaderField credential = HeaderField.sensitive("authorization", "Bearer secret-token");
        writer.headers(1, false, List.of(new HeaderField(":method", "POST"), credential));
        writer.headers(3, false, List.of(new HeaderField(":method", "POST"), credential));
        writer.flush();
        byte[] bytes = wire.toByteArray();
        // :method POST is static index 3 (0x83); authorization is static name index 23 under the 4-bit prefix
        assertEquals((byte) 0x83, bytes[9]);
        assertEquals(0x10 | 0x0F, bytes[10] & 0xFF, "never-indexed literal, name index 23 = 15 + 8");
        assertEquals(8, bytes[11]);
        readAll();
        assertEquals(List.of(List.of(new HeaderField(":method", "POST"), credential),
                List.of(new HeaderField(":method", "POST"), credential)), seen.headerBlocks,
                "both blocks carry it whole: it entered no table");
    }

    @Test
    void anEntryLargerThanTheTableIsWrittenWithoutIndexing() throws Exception {
        writer.applyPeerSettings(Map.of(0x1, 64L));
        HeaderField big = new HeaderField("x-big", "v".repeat(100));
        writer.headers(1, false, List.of(big));
        writer.headers(3, false, List.of(big));
        writer.flush();
        byte[] bytes = wire.toByteArray();
        assertEquals(0x20 | 0x1F, bytes[9] & 0xFF, "the first block announces the table size");
        readAll();
        assertEquals(List.of(List.of(big), List.of(big)), seen.headerBlocks);
    }

    @Test
    void nothingAddedAfterTheLastGoAwayIsWritten() throws Exception {
        writer.data(1, false, bytes("before"), 0, 6);
        writer.lastGoAway(1, 0, new byte[0]);
        writer.data(1, false, bytes("after"), 0, 5);
        writer.headers(3, false, List.of(new HeaderField(":status", "200")));
        writer.rstStream(1, 0x8);
        writer.windowUpdate(0, 100);
        writer.lastGoAway(1, 0x2, new byte[0]); // a second adds nothing either
        assertTrue(writer.ended());
        writer.flush();
        readAll();
        assertEquals(List.of("DATA 1 before (6)", "GOAWAY 1 0 "), seen.frames);
    }

    @Test
    void gatheredFramesReachTheStreamInOneWrite() throws Exception {
        CountingStream counting = new CountingStream();
        Http2Writer w = new Http2Writer(counting);
        for (int i = 0; i < 10; i++) {
            w.data(1, false, bytes("chunk"), 0, 5);
        }
        w.flush();
        assertEquals(1, counting.writes);
        assertEquals(10 * (9 + 5), counting.bytes);
    }

    @Test
    void framesAddedWhileAFlushWritesGoOutWithTheNextFlushInOneWrite() throws Exception {
        java.util.concurrent.CountDownLatch writing = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.List<Integer> writes = new java.util.concurrent.CopyOnWriteArrayList<>();
        Http2Writer w = new Http2Writer(new java.io.OutputStream() {
            @Override
            public void write(int b) {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                writes.add(len);
                writing.countDown();
                try {
                    release.await(); // the socket write blocks until the test lets it go
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        w.ping(false, 1);
        Thread first = Thread.ofVirtual().start(() -> flushQuietly(w));
        writing.await();
        for (int i = 0; i < 3; i++) {
            w.data(1, false, bytes("abc"), 0, 3); // added while the first write is blocked: not held back by it
        }
        Thread second = Thread.ofVirtual().start(() -> flushQuietly(w));
        release.countDown();
        first.join();
        second.join();
        assertEquals(List.of(9 + 8, 3 * (9 + 3)), writes, "the PING alone, then the three DATA frames together");
    }

    @Test
    void aFlushInsideTheWritersMonitorIsRefused() {
        synchronized (writer) {
            writer.ping(false, 1);
            assertThrows(IllegalStateException.class, writer::flush,
                    "a flush in progress needs the monitor to take the next batch: this would deadlock");
        }
    }

    private static void flushQuietly(Http2Writer w) {
        try {
            w.flush();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private void readAll() throws Exception {
        Http2Reader reader = new Http2Reader(new ByteArrayInputStream(wire.toByteArray()), seen);
        while (reader.nextFrame()) {
            // every frame goes to the recorder
        }
    }

    private static List<Integer> frameTypes(byte[] bytes) {
        List<Integer> types = new ArrayList<>();
        for (int off = 0; off < bytes.length; ) {
            int length = ((bytes[off] & 0xFF) << 16) | ((bytes[off + 1] & 0xFF) << 8) | (bytes[off + 2] & 0xFF);
            types.add(bytes[off + 3] & 0xFF);
            off += 9 + length;
        }
        return types;
    }

    /** The fields by name: the codec keeps pseudo-header fields first, the others in Helidon's order. */
    private static List<HeaderField> sorted(List<HeaderField> fields) {
        return fields.stream().sorted(java.util.Comparator.comparing(HeaderField::name)).toList();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** Counts the writes that reach it. */
    private static final class CountingStream extends java.io.OutputStream {
        int writes;
        int bytes;

        @Override
        public void write(int b) {
            writes++;
            bytes++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            writes++;
            bytes += len;
        }
    }
}
