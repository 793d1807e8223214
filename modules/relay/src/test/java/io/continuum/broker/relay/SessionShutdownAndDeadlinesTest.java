package io.continuum.broker.relay;

import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.transport.TrackingConnector;
import io.continuum.broker.testing.bus.InProcessRouter.SessionAnswer;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.net.LoopbackListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.testing.bus.EndToEnd;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * bus-protocol-v1.md sections 2 and 4 item 6 against real routers: a shutdown with no welcomed session
 * abandons the attempt at once (also in the middle of a TLS handshake), a shutdown during a router drain
 * becomes a shutdown with the earlier deadline, and the welcome wait is its own deadline counted from
 * {@code hello}.
 */
@EndToEnd
@ExtendWith({LeakCheck.class, BrokerHarness.CloseAfterEach.class})
@LeakCheck.IgnoreThreads(BrokerHarness.ROUTER_THREADS)
class SessionShutdownAndDeadlinesTest {
    private BrokerHarness h;

    @Test
    void aShutdownWhileTheRouterLeavesTheTlsHandshakeUnansweredEndsTheAttemptAtOnce() throws Exception {
        CountingMetrics metrics = new CountingMetrics();
        try (LoopbackListener silent = LoopbackListener.open("silent-router", 50)) {
            RelayConfig config = RelayConfig.builder().busUrl(URI.create("https://localhost:" + silent.port()))
                    .caCertificates(() -> List.of(BrokerHarness.PKI.caCertificate())).credential(() -> Credential.of(BrokerHarness.CREDENTIAL))
                    .clientId("broker-a").kubernetesNamespace("k").dynamoNamespaces(List.of(NAMESPACE))
                    // far beyond the test's wait: only abandoning the attempt lets shutdown return in time
                    .busConnectTimeout(Duration.ofMinutes(10))
                    .build();
            TrackingConnector connector = new TrackingConnector();
            try (EventBroker broker = EventBroker.create(config, new MutableView().synced(true), metrics, connector,
                    RandomGenerator.getDefault())) {
                LeakCheck.expect("broker bus connections open", connector::openConnections, 0);
                broker.start();
                Socket s = silent.awaitConnection();
                s.setSoTimeout((int) WAIT.toMillis());
                InputStream in = s.getInputStream();
                assertTrue(in.read() >= 0, "the ClientHello arrives; the router never answers it");
                Thread shutdown = BrokerHarness.shutdownInBackground(broker, Duration.ofSeconds(30));
                shutdown.join(WAIT);
                assertFalse(shutdown.isAlive(), "shutdown must not wait for bus_connect_timeout");
                // The attempt was abandoned: the broker closed its socket (nothing more than the ClientHello came).
                try {
                    while (in.read() >= 0) {
                        // rest of the ClientHello
                    }
                } catch (SocketException reset) {
                    // closed by the broker with unread bytes: also an end
                }
                assertEquals(1, metrics.get("session_ends_total{reason=shutdown}"));
                assertEquals(1, metrics.get("session_attempts_total{result=failed}"));
                assertEquals(0, metrics.get("reconnects_total"));
                assertEquals(0, silent.pendingConnections(), "no further attempt");
            }
        }
    }

    @Test
    void aShutdownDuringARouterDrainSendsDrainingAndEndsAtTheEarlierDeadlineAsShutdown() throws Exception {
        h = new BrokerHarness();
        BrokerHarness.Subscribed subscribed = h.startSubscribed(1);
        // The router's drain would let the open stream run for ten minutes.
        assertEquals(Code.DRAINING, subscribed.drainThenSubscribe(600_000, 2).code());
        Thread shutdown = BrokerHarness.shutdownInBackground(h.broker, Duration.ofMillis(300));
        Frame.Draining draining = subscribed.session().await(Frame.Draining.class, f -> true, WAIT);
        assertEquals(300, draining.deadlineMs(), "the configured drain_deadline");
        assertTrue(subscribed.session().awaitEnded(WAIT), "the session ends at the shutdown's deadline, the earlier one");
        shutdown.join(WAIT);
        assertFalse(shutdown.isAlive());
        assertEquals(1, h.metrics.get("session_ends_total{reason=shutdown}"));
        assertEquals(0, h.metrics.get("session_ends_total{reason=drained}"));
        assertEquals(1, h.router.sessionAttempts(), "no reconnect after shutdown");
        assertTrue(subscribed.session().drainReceived().stream().noneMatch(f -> f instanceof Frame.StreamClosed),
                "the stream still open at the deadline ends with the session, silently");
    }

    @Test
    void theWelcomeWaitCountsFromHelloSoASlowTlsHandshakeDoesNotEatIt() {
        // bus_connect_timeout 6 s: the TLS handshake takes 4 s of it, then the router answers hello after 4 s.
        // Each stage is within its own 6 s; together they are 8 s.
        SessionAnswer welcome = SessionAnswer.welcome(-1, -1);
        h = new BrokerHarness(c -> c.busConnectTimeout(Duration.ofSeconds(6)),
                r -> r.sessionPolicy(hello -> hello == null ? null
                        : new SessionAnswer(200, Map.of(), welcome.first(), Duration.ofSeconds(4))), true);
        h.proxy.delayFirstAnswer(Duration.ofSeconds(4));
        h.start();
        await(() -> h.metrics.get("session_attempts_total{result=welcomed}") == 1, "welcomed");
        assertEquals(0, h.metrics.get("session_attempts_total{result=failed}"), "the first attempt was welcomed");
    }
}
