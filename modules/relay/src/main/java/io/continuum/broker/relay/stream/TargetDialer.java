package io.continuum.broker.relay.stream;

import io.continuum.broker.relay.dial.DialResult;
import io.continuum.broker.relay.dial.DialTarget;

/**
 * What a stream's opener asks to have its target checked and dialed (bus-protocol-v1.md section 5 rows 4-10):
 * {@code TargetCheck::checkAndConnect} in the broker, a stand-in in tests that need no real dial. Blocking, on the
 * opener's virtual thread; interrupting it cancels the dial, and the answer is then {@link DialResult.Cancelled}.
 */
@FunctionalInterface
public interface TargetDialer {
    /**
     * Checks and dials.
     *
     * @param target the subscribe's target, read once when the subscribe arrived
     * @return connected, refused or cancelled
     */
    DialResult dial(DialTarget target);
}
