package io.continuum.broker.relay.loop;

import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.relay.CountingMetrics;
import io.continuum.broker.relay.MutableView;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.dial.DialResult;
import io.continuum.broker.relay.dial.RefusalLog;
import io.continuum.broker.relay.transport.TransportSettings;
import io.continuum.broker.testing.bus.InProcessRouter.SessionAnswer;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.bus.RouterSession;
import org.junit.jupiter.api.Test;
import io.continuum.broker.relay.api.Credential;

import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import io.continuum.broker.relay.session.StreamRegistry;
import io.continuum.broker.relay.transport.BusConnector;

/**
 * Section 4 items 4-6 against a real router, with the session loop's clock injected instead of a 60 s
 * wait: a session that stayed welcomed for 60 s resets the backoff sequence also when it ends in a
 * rebalance drain; the fast path itself neither counts nor resets. Each delay's draw is recorded from the
 * jitter source, whose upper bound names the position n in the sequence ({@code initial x 2^n}).
 */
class BackoffAcrossARebalanceTest {
    private static final long INITIAL_MS = 10;

    @Test
    void aSixtySecondSessionEndedByARebalanceStillResetsTheBackoff() throws Exception {
        AtomicLong clock = new AtomicLong(System.nanoTime());
        List<Long> upperBounds = new CopyOnWriteArrayList<>();
        RandomGenerator recording = ChosenJitter.lowest(upperBounds::add);
        try (InProcessRouter router = InProcessRouter.builder()
                .tls(BrokerHarness.SERVER.key(), List.of(BrokerHarness.SERVER.certificate()))
                .credential(BrokerHarness.CREDENTIAL)
                .sessionPolicy(hello -> SessionAnswer.status(503)).start()) {
            RelayConfig config = RelayConfig.builder().busUrl(router.url()).caCertificates(() -> List.of(BrokerHarness.PKI.caCertificate()))
                    .credential(() -> Credential.of(BrokerHarness.CREDENTIAL)).clientId("broker-a").kubernetesNamespace("k")
                    .dynamoNamespaces(List.of(BrokerHarness.NAMESPACE))
                    .reconnectBackoff(Duration.ofMillis(INITIAL_MS), Duration.ofSeconds(10)).build();
            CountingMetrics metrics = new CountingMetrics();
            SessionLoop loop = new SessionLoop(config, new MutableView().synced(true), BusConnector.of(TransportSettings.defaults()),
                    target -> new DialResult.Refused(io.continuum.broker.protocol.Code.INTERNAL_ERROR, "unused"),
                    metrics, new StreamRegistry(new RefusalLog()), recording, clock::get, "test");
            loop.start();
            try {
                // Three refused attempts: delays n = 1, 2, 3.
                await(() -> upperBounds.size() >= 3, "three backoff delays");
                router.sessionPolicy(hello -> hello == null ? null : SessionAnswer.welcome(-1, -1));
                RouterSession session = router.awaitSession(WAIT);
                await(metrics::connected, "welcomed");
                int drawsBeforeDrain = upperBounds.size();
                assertEquals(List.of(ms(20), ms(40), ms(80)), upperBounds.subList(0, 3));
                // The session stays welcomed for 60 s on the loop's clock, then the router rebalances it.
                clock.addAndGet(Duration.ofSeconds(60).toNanos());
                router.sessionPolicy(hello -> SessionAnswer.status(503));
                session.send(new Frame.Drain("rebalance", OptionalLong.of(0)));
                await(() -> upperBounds.size() >= drawsBeforeDrain + 2, "the fast path, then one backoff delay");
                assertEquals(ms(500), upperBounds.get(drawsBeforeDrain), "the rebalance fast path (250-500 ms)");
                assertEquals(ms(20), upperBounds.get(drawsBeforeDrain + 1),
                        "the first failure after the long session is n = 1 again, not n = 4");
                assertEquals(1, metrics.get("session_ends_total{reason=drained}"));
            } finally {
                loop.abort();
            }
        }
    }

    private static long ms(long millis) {
        return Duration.ofMillis(millis).toNanos();
    }
}
