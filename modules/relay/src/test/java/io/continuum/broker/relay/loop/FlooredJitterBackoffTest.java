package io.continuum.broker.relay.loop;

import java.time.Duration;
import java.util.random.RandomGenerator;

import io.continuum.broker.relay.api.ReconnectBackoff;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** bus-protocol-v1.md section 4 items 4-5; R-BEH 6-7. */
class FlooredJitterBackoffTest {
    /** Always draws the lowest value of the range. */
    private static final RandomGenerator LOWEST = new FixedRandom(false);
    /** Always draws the highest value of the range. */
    private static final RandomGenerator HIGHEST = new FixedRandom(true);

    @Test
    void theNthDelayIsBoundedByInitialTimesTwoToTheNCappedAtMax() {
        FlooredJitterBackoff high = new FlooredJitterBackoff(ReconnectBackoff.DEFAULT, HIGHEST);
        long[] expectedSeconds = {2, 4, 8, 16, 32, 60, 60, 60};
        for (long s : expectedSeconds) {
            assertEquals(Duration.ofSeconds(s), high.nextDelay());
        }
        FlooredJitterBackoff low = new FlooredJitterBackoff(ReconnectBackoff.DEFAULT, LOWEST);
        for (int i = 0; i < 8; i++) {
            assertEquals(Duration.ofSeconds(1), low.nextDelay(), "every delay is at least initial");
        }
    }

    @Test
    void everyDelayLiesWithinInitialAndMaxForARealRandomSource() {
        FlooredJitterBackoff backoff = new FlooredJitterBackoff(
                new ReconnectBackoff(Duration.ofMillis(100), Duration.ofSeconds(3)),
                RandomGenerator.of("L64X128MixRandom"));
        for (int i = 0; i < 10_000; i++) {
            Duration d = backoff.nextDelay();
            assertTrue(d.compareTo(Duration.ofMillis(100)) >= 0 && d.compareTo(Duration.ofSeconds(3)) <= 0, d::toString);
        }
    }

    @Test
    void resetStartsTheSequenceOver() {
        FlooredJitterBackoff backoff = new FlooredJitterBackoff(ReconnectBackoff.DEFAULT, HIGHEST);
        backoff.nextDelay();
        backoff.nextDelay();
        backoff.reset();
        assertEquals(Duration.ofSeconds(2), backoff.nextDelay());
        assertEquals(1, backoff.attempt());
    }

    @Test
    void initialAboveMaxIsRejected() {
        assertThrows(IllegalArgumentException.class,
                () -> new ReconnectBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)));
    }

    @Test
    void aRebalanceDrainTakesTheFastPathUnlessAnotherCameWithinSixtySeconds() {
        long[] now = {0};
        RebalanceThrottle throttle = new RebalanceThrottle(() -> now[0], HIGHEST);
        assertEquals(Duration.ofMillis(500), throttle.onRebalanceDrain());
        now[0] += Duration.ofSeconds(59).toNanos();
        assertNull(throttle.onRebalanceDrain(), "second rebalance within 60 s: exponential backoff");
        now[0] += Duration.ofSeconds(60).toNanos();
        assertNotNull(throttle.onRebalanceDrain(), "60 s after the last rebalance the fast path is back");
        RebalanceThrottle low = new RebalanceThrottle(() -> 0L, LOWEST);
        assertEquals(Duration.ofMillis(250), low.onRebalanceDrain());
    }

    /** A jitter source pinned to one end of every range, to check bounds deterministically. */
    private record FixedRandom(boolean highest) implements RandomGenerator {
        @Override
        public long nextLong() {
            return 0;
        }

        @Override
        public long nextLong(long origin, long bound) {
            return highest ? bound - 1 : origin;
        }
    }
}
