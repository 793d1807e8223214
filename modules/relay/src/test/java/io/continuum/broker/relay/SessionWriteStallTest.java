package io.continuum.broker.relay;

import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.relay.BrokerHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.random.RandomGenerator;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.transport.TrackingConnector;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * bus-protocol-v1.md section 4 item 2 with a router that has stopped reading its session stream: once the
 * broker's frames have used the stream's 64 KiB window, every session write blocks (the refusal in the
 * reader, the heartbeat in the timer). The router then falls silent, and the broker must still end the
 * session as {@code idle_timeout} and reconnect, rather than wait on the blocked write forever.
 */
@ExtendWith(LeakCheck.class)
class SessionWriteStallTest {
    @Test
    void aRouterThatStopsReadingAndFallsSilentStillEndsTheSessionAsIdle() throws Exception {
        CountingMetrics metrics = new CountingMetrics();
        MutableView view = new MutableView().synced(true);
        try (RawH2Peer peer = RawH2Peer.start(BrokerHarness.SERVER, Map.of())) {
            RelayConfig config = RelayConfig.builder().busUrl(peer.busUrl()).caBundle(BrokerHarness.PKI::caPem)
                    .credential(() -> BrokerHarness.CREDENTIAL).clientId("broker-a").kubernetesNamespace("k")
                    .dynamoNamespaces(List.of("dynamo"))
                    .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(100)).build();
            TrackingConnector connector = new TrackingConnector();
            try (EventBroker broker = EventBroker.create(config, view, metrics, connector,
                    RandomGenerator.getDefault())) {
                LeakCheck.expect("broker HTTP/2 stream slots in use", connector::streamsInUse, 0);
                LeakCheck.expect("broker bus connections open", connector::openConnections, 0);
                broker.start();
                Frame.Welcome welcome = new Frame.Welcome(1, "stalled", OptionalLong.of(200), OptionalLong.of(1_000),
                        OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty());
                try (RawRouter router = RawRouter.acceptSession(peer, WAIT, welcome, false)) {
                    await(metrics::connected, "welcomed");
                    // 1,000 refusals of ~100 bytes each: far more than the 65,535-byte window the router never
                    // replenishes, so the broker's session writes are blocked when the router falls silent.
                    for (long id = 1; id <= 1_000; id++) {
                        router.send(new Frame.Subscribe(id, new Target.AnnouncedSource("source-" + id)));
                    }
                    peer.accept(WAIT); // the reconnect: only happens once the stalled session has ended
                    await(() -> metrics.get("session_ends_total{reason=idle_timeout}") == 1, "idle_timeout counted");
                    assertEquals(1, metrics.get("reconnects_total"));
                }
            }
        }
    }
}
