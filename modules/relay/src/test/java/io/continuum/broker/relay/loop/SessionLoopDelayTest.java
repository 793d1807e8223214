package io.continuum.broker.relay.loop;

import java.net.URI;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.random.RandomGenerator;

import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.dial.RefusalLog;
import org.junit.jupiter.api.Test;
import io.continuum.broker.relay.api.Credential;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import io.continuum.broker.relay.session.SessionOutcome;
import io.continuum.broker.relay.session.StreamRegistry;

/** bus-protocol-v1.md section 4 items 4-6: which delay follows which session end. */
class SessionLoopDelayTest {
    private final long[] now = {0};

    private SessionLoop loop() {
        RelayConfig config = RelayConfig.builder().busUrl(URI.create("https://router.example"))
                .credential(() -> Credential.of("x")).clientId("c").kubernetesNamespace("k")
                .reconnectBackoff(Duration.ofSeconds(1), Duration.ofSeconds(60)).build();
        RandomGenerator highest = ChosenJitter.highest();
        return new SessionLoop(config, null, null, null, RelayMetrics.NOOP, new StreamRegistry(new RefusalLog()),
                highest, () -> now[0], "test");
    }

    private static SessionOutcome ended(EndReason reason, Duration welcomedFor, Frame.Drain drain) {
        return new SessionOutcome(AttemptResult.WELCOMED, reason, welcomedFor, drain, null, "");
    }

    private static final Frame.Drain REBALANCE = new Frame.Drain("rebalance", OptionalLong.of(1000));
    /** An attempt that never got a session: the connect failed. */
    private static final SessionOutcome FAILED = new SessionOutcome(AttemptResult.FAILED, EndReason.CONNECT_FAILED,
            Duration.ZERO, null, null, "");

    @Test
    void consecutiveFailuresBackOffExponentiallyAndAStableSessionResetsTheSequence() {
        SessionLoop loop = loop();
        assertEquals(Duration.ofSeconds(2), loop.nextDelay(FAILED));
        assertEquals(Duration.ofSeconds(4), loop.nextDelay(FAILED));
        assertEquals(Duration.ofSeconds(8), loop.nextDelay(ended(EndReason.IDLE_TIMEOUT, Duration.ofSeconds(59), null)),
                "a session welcomed for less than 60 s counts as a failed attempt");
        assertEquals(Duration.ofSeconds(2), loop.nextDelay(ended(EndReason.CONNECTION_LOST, Duration.ofSeconds(60), null)),
                "60 s welcomed resets the sequence: n = 1 again");
    }

    @Test
    void aRebalanceDrainTakesTheFastPathOncePerMinuteWithoutTouchingTheBackoff() {
        SessionLoop loop = loop();
        loop.nextDelay(FAILED);
        Duration fast = loop.nextDelay(ended(EndReason.DRAINED, Duration.ZERO, REBALANCE));
        assertEquals(Duration.ofMillis(500), fast);
        assertEquals(Duration.ofSeconds(4), loop.nextDelay(FAILED), "the fast path did not reset or advance the sequence");
        now[0] += Duration.ofSeconds(30).toNanos();
        assertEquals(Duration.ofSeconds(8), loop.nextDelay(ended(EndReason.DRAINED, Duration.ZERO, REBALANCE)),
                "a second rebalance within 60 s uses the backoff");
        now[0] += Duration.ofSeconds(61).toNanos();
        assertEquals(Duration.ofMillis(500), loop.nextDelay(ended(EndReason.DRAINED, Duration.ZERO, REBALANCE)));
    }

    @Test
    void aLongSessionEndedByARebalanceDrainStillResetsTheBackoff() {
        SessionLoop loop = loop();
        loop.nextDelay(FAILED);
        loop.nextDelay(FAILED);
        loop.nextDelay(FAILED);
        assertEquals(Duration.ofMillis(500), loop.nextDelay(ended(EndReason.DRAINED, Duration.ofSeconds(60), REBALANCE)),
                "the rebalance fast path");
        // The session that stayed welcomed for 60 s resets the sequence; the fast path itself does not count.
        assertEquals(Duration.ofSeconds(2), loop.nextDelay(FAILED), "n = 1 again after a 60 s session");
    }

    @Test
    void aNonRebalanceDrainUsesTheBackoff() {
        SessionLoop loop = loop();
        Duration d = loop.nextDelay(ended(EndReason.DRAINED, Duration.ZERO, new Frame.Drain("maintenance",
                OptionalLong.of(5000))));
        assertEquals(Duration.ofSeconds(2), d);
    }

    @Test
    void retryAfterRaisesTheNextDelayCappedAtMax() {
        SessionLoop loop = loop();
        SessionOutcome refused503 = new SessionOutcome(AttemptResult.REFUSED, EndReason.REFUSED, Duration.ZERO, null,
                Duration.ofSeconds(30), "");
        assertEquals(Duration.ofSeconds(30), loop.nextDelay(refused503));
        SessionOutcome huge = new SessionOutcome(AttemptResult.REFUSED, EndReason.REFUSED, Duration.ZERO, null,
                Duration.ofHours(1), "");
        assertTrue(loop.nextDelay(huge).compareTo(Duration.ofSeconds(60)) <= 0);
        assertEquals(Duration.ofSeconds(60), loop.nextDelay(huge));
    }
}
