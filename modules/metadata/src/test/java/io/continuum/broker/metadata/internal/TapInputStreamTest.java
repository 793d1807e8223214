package io.continuum.broker.metadata.internal;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The bounded capture behind R-META 4 (a channel value is never buffered past 64 KiB): a capture may
 * start inside the read-ahead already delivered, may span many reads and several turns of the 32 KiB
 * ring, and returns exactly the bytes of the value, or null past the limit.
 */
class TapInputStreamTest {
    private static final int LIMIT = 64 * 1024;

    private final byte[] data = new byte[1 << 20];

    TapInputStreamTest() {
        new Random(42).nextBytes(data);
    }

    @Test
    void aValueInsideTheReadAheadIsCapturedExactly() throws IOException {
        TapInputStream tap = new TapInputStream(new ByteArrayInputStream(data));
        tap.readNBytes(new byte[8_000], 0, 8_000);
        tap.startCapture(1_000, LIMIT);
        assertArrayEquals(Arrays.copyOfRange(data, 1_000, 1_250), tap.endCapture(250));
    }

    @Test
    void valuesSpanningReadsAndRingTurnsAreCapturedExactlyUpToTheLimit() throws IOException {
        Random random = new Random(7);
        for (int round = 0; round < 300; round++) {
            TapInputStream tap = new TapInputStream(new ByteArrayInputStream(data));
            long delivered = read(tap, random.nextInt(40_000), random);
            long from = delivered - random.nextInt((int) Math.min(delivered, 32 * 1024) + 1);
            int length = random.nextInt(round % 3 == 0 ? 200_000 : 70_000);
            tap.startCapture(from, LIMIT);
            while (delivered < from + length) {
                delivered += read(tap, 1 + random.nextInt(9_000), random);
            }
            byte[] value = tap.endCapture(length);
            if (length > LIMIT) {
                assertNull(value, "round " + round + ": " + length + " bytes are over the limit");
            } else {
                assertArrayEquals(Arrays.copyOfRange(data, (int) from, (int) from + length), value, "round " + round);
            }
        }
    }

    @Test
    void exactlyTheLimitIsKeptAndOneByteMoreIsNot() throws IOException {
        for (int length : new int[] {LIMIT, LIMIT + 1}) {
            TapInputStream tap = new TapInputStream(new ByteArrayInputStream(data));
            tap.readNBytes(new byte[100], 0, 100);
            tap.startCapture(50, LIMIT);
            tap.readNBytes(new byte[LIMIT + 8_000], 0, LIMIT + 8_000);
            byte[] value = tap.endCapture(length);
            if (length == LIMIT) {
                assertArrayEquals(Arrays.copyOfRange(data, 50, 50 + LIMIT), value);
            } else {
                assertNull(value);
            }
        }
    }

    @Test
    void aCaptureCannotStartBeforeTheRing() throws IOException {
        TapInputStream tap = new TapInputStream(new ByteArrayInputStream(data));
        tap.readNBytes(new byte[40_000], 0, 40_000);
        assertThrows(IllegalStateException.class, () -> tap.startCapture(40_000 - 32 * 1024 - 1, LIMIT));
    }

    private static long read(TapInputStream tap, int bytes, Random random) throws IOException {
        int done = 0;
        byte[] buffer = new byte[bytes + 16];
        while (done < bytes) {
            int n = tap.read(buffer, random.nextInt(16), Math.min(bytes - done, 1 + random.nextInt(9_000)));
            done += n;
        }
        return done;
    }
}
