package io.continuum.broker.relay.dial;

import java.time.Duration;

/**
 * What {@link TargetCheck} reports about its dials. The relay's metrics implement it; the check knows nothing else
 * of them.
 */
@FunctionalInterface
public interface DialMetrics {
    /** Reports nothing. */
    DialMetrics NONE = (connected, elapsed) -> { };

    /**
     * A publisher dial ended: connected, or refused with {@code upstream_connect_failed} (resolution or every
     * connect attempt failed). Targets refused by a check before dialing, and cancelled dials, are not reported.
     *
     * @param connected whether the socket connected
     * @param elapsed   from the start of the checks to the connected socket or the failure
     */
    void publisherDialed(boolean connected, Duration elapsed);
}
