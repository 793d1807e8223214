package io.continuum.broker.relay.loop;

import java.util.function.LongConsumer;
import java.util.random.RandomGenerator;

/**
 * Reconnect jitter a test chooses: every delay drawn from {@code [origin, bound)} is its lowest or its highest
 * value, and the upper bound of each draw is reported, so a test can check the backoff sequence exactly.
 */
final class ChosenJitter implements RandomGenerator {
    private final boolean highest;
    private final LongConsumer upperBounds;

    private ChosenJitter(boolean highest, LongConsumer upperBounds) {
        this.highest = highest;
        this.upperBounds = upperBounds;
    }

    /** The shortest delay every time (the test waits as little as possible); reports each draw's upper bound. */
    static ChosenJitter lowest(LongConsumer upperBounds) {
        return new ChosenJitter(false, upperBounds);
    }

    /** The longest delay every time. */
    static ChosenJitter highest() {
        return new ChosenJitter(true, bound -> { });
    }

    @Override
    public long nextLong() {
        return 0;
    }

    @Override
    public long nextLong(long origin, long bound) {
        upperBounds.accept(bound - 1);
        return highest ? bound - 1 : origin;
    }
}
