package io.continuum.broker.relay;

import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.random.RandomGenerator;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.transport.TrackingConnector;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.router.RawBusRouter;
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
        try (BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.start(c -> c)) {
            RawH2Peer peer = raw.peer();
            CountingMetrics metrics = raw.metrics();
            Frame.Welcome welcome = new Frame.Welcome(1, "stalled", OptionalLong.of(200), OptionalLong.of(1_000),
                    OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty());
            try (RawBusRouter router = RawBusRouter.acceptSession(peer, WAIT, welcome, RawBusRouter.Windows.GRANT_AS_READ_BUT_SESSION)) {
                await(metrics::connected, "welcomed");
                // Refusals of ~100 bytes each. The first 400 fit the session stream's 65,535-byte send window,
                // which this router never replenishes; 400 more exhaust it, so the broker's reader blocks on a
                // refusal and its timer would block on a heartbeat. Sent in two batches, the subscribes never
                // exceed the broker's own 64 KiB receive window (it reads the first batch completely).
                for (long id = 1; id <= 400; id++) {
                    router.send(new Frame.Subscribe(id, new Target.AnnouncedSource("source-" + id)));
                }
                for (int i = 0; i < 400; i++) {
                    router.await(Frame.StreamRefused.class, f -> true, WAIT);
                }
                for (long id = 401; id <= 800; id++) {
                    router.send(new Frame.Subscribe(id, new Target.AnnouncedSource("source-" + id)));
                }
                peer.accept(WAIT); // the reconnect: only happens once the stalled session has ended
                await(() -> metrics.get("session_ends_total{reason=idle_timeout}") == 1, "idle_timeout counted");
                long answered = 400 + router.drainFromBroker().stream()
                        .filter(f -> f instanceof Frame.StreamRefused).count();
                assertTrue(answered < 800, "the session's send window was exhausted: " + answered + " answers");
                assertEquals(1, metrics.get("reconnects_total"));
            }
        }
    }
}
