package io.continuum.broker.relay.hostile;

import java.net.Socket;
import java.util.OptionalLong;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.testing.bus.InProcessRouter.SessionAnswer;
import io.continuum.broker.testing.bus.RouterSession;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Durations a router may legally send at the largest integer the protocol allows (2^53-1 ms,
 * section 3: about 285,000 years, more than a long of nanoseconds holds): a {@code drain}
 * {@code deadline_ms}, and a {@code welcome} {@code idle_timeout_ms} (section 3.2 clamps it only
 * from below). Absurd, but each must behave as a very long time, not break the session's threads.
 */
class HugeDurationsTest {
    private static final long LARGEST_DEADLINE_MS = (1L << 53) - 1;

    @Test
    void aDrainWithTheLargestDeadlineEndsTheSessionWhenTheLastStreamCloses() throws Exception {
        try (BrokerHarness h = new BrokerHarness()) {
            BrokerHarness.Subscribed subscribed = h.startSubscribed(1);
            subscribed.session().send(new Frame.Drain("maintenance", OptionalLong.of(LARGEST_DEADLINE_MS)));
            subscribed.session().subscribe(2, NAMESPACE, "127.0.0.1", subscribed.publisher().port());
            assertEquals(Code.DRAINING,
                    assertInstanceOf(Frame.StreamRefused.class, subscribed.session().awaitAnswer(2, WAIT)).code());
            subscribed.upstream().close();
            subscribed.session().await(Frame.StreamClosed.class, f -> f.streamId() == 1, WAIT);
            assertTrue(subscribed.session().awaitEnded(WAIT), "the drain ended the session once no stream was open");
            h.router.awaitSession(WAIT);
            await(() -> h.metrics.get("session_ends_total{reason=drained}") == 1, "drained counted");
        }
    }

    @Test
    void theLargestIdleTimeoutStillLeavesHeartbeatsFlowing() {
        try (BrokerHarness h = new BrokerHarness(c -> c, r -> r.sessionPolicy(hello -> hello == null ? null
                : SessionAnswer.welcome(100, LARGEST_DEADLINE_MS)))) {
            RouterSession session = h.startSession();
            for (int i = 0; i < 3; i++) {
                session.await(Frame.Heartbeat.class, f -> true, WAIT);
            }
            assertEquals(1, h.router.sessionAttempts());
        }
    }
}
