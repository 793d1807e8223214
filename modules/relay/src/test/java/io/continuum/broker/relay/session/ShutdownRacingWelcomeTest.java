package io.continuum.broker.relay.session;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.relay.CountingMetrics;
import io.continuum.broker.relay.MutableView;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.dial.DialResult;
import io.continuum.broker.relay.dial.RefusalLog;
import io.continuum.broker.relay.transport.BusEndpoint;
import io.continuum.broker.relay.transport.TlsTrust;
import io.continuum.broker.relay.transport.TrackingConnector;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawBusRouter.Windows;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

/**
 * Issue 44 item 4, second half: a shutdown that comes once the broker has read the router's {@code welcome}, but
 * before the session counts as welcomed, still drains it: the router, which sent welcome, gets {@code draining}
 * and then the end of the session request, as for any welcomed session (bus-protocol-v1.md section 4 item 6). The
 * shutdown is made on the session's own thread right after the handshake accepted the welcome, which is that race
 * with its order pinned. Before, it found the session still awaiting welcome and abandoned it: no draining.
 */
class ShutdownRacingWelcomeTest {

    @Test
    void aShutdownRightAfterTheWelcomeWasReadSendsDraining() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(BrokerHarness.SERVER, java.util.Map.of())) {
            RelayConfig config = RelayConfig.builder().busUrl(peer.busUrl())
                    .caCertificates(() -> List.of(BrokerHarness.PKI.caCertificate()))
                    .credential(() -> Credential.of(BrokerHarness.CREDENTIAL)).clientId("broker-a")
                    .kubernetesNamespace("k").dynamoNamespaces(List.of(NAMESPACE)).build();
            BusEndpoint endpoint = new BusEndpoint(peer.busUrl(),
                    new TlsTrust.Certificates(List.of(BrokerHarness.PKI.caCertificate())), null,
                    Duration.ofSeconds(10), "continuum-event-broker/test");
            TrackingConnector connector = new TrackingConnector();
            BusSession session = new BusSession(config, endpoint, Credential.of(BrokerHarness.CREDENTIAL), connector,
                    new MutableView().synced(true), target -> new DialResult.Cancelled(), new CountingMetrics(),
                    new StreamRegistry(new RefusalLog()));
            session.afterWelcomeRead(() -> session.shutdown(Duration.ofSeconds(5)));
            CompletableFuture<SessionOutcome> outcome = CompletableFuture.supplyAsync(session::run,
                    runnable -> Thread.ofVirtual().start(runnable));

            try (RawBusRouter router = RawBusRouter.acceptHello(peer, WAIT, Windows.GRANT_AS_READ)) {
                router.sendSessionHead();
                router.send(RawBusRouter.welcome("raced"));

                Frame.Draining draining = router.await(Frame.Draining.class, f -> true, WAIT);
                assertEquals(5_000, draining.deadlineMs());
                assertTrue(router.awaitSessionRequestEnd(WAIT), "then the session request ends");
                router.wire().sendData(RawBusRouter.SESSION_STREAM, new byte[0], true);
                SessionOutcome ended = outcome.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                assertEquals(EndReason.SHUTDOWN, ended.reason());
            }
        }
    }
}
