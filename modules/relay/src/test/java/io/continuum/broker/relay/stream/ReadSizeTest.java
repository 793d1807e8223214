package io.continuum.broker.relay.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * R-BUF 1 and 3: one read of the publisher socket becomes one queued chunk, charged its length plus 64 bytes.
 * A read must therefore never be able to take a stream's whole budget at once, or a burst overflows a stream
 * whose router keeps up (at the 16 KiB minimum budget a 64 KiB read would).
 */
class ReadSizeTest {
    @ParameterizedTest
    @ValueSource(ints = {16_384, 20_000, 65_536, 65_600, 262_144, 1_048_576})
    void aReadNeverTakesMoreThanAQuarterOfTheStreamBudget(int budget) {
        int read = StreamPumps.readBytes(budget);
        assertTrue(read + ChunkQueue.CHUNK_OVERHEAD_BYTES <= budget / 4 + ChunkQueue.CHUNK_OVERHEAD_BYTES,
                "read " + read + " for budget " + budget);
        assertTrue(read >= StreamPumps.MIN_READ_BYTES, "never below the least read size");
    }

    @ParameterizedTest
    @ValueSource(ints = {262_400, 1_048_576})
    void largeBudgetsKeepThe64KiBRead(int budget) {
        assertEquals(StreamPumps.READ_CHUNK_BYTES, StreamPumps.readBytes(budget));
    }
}
