package io.continuum.broker.relay.hostile;

import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.relay.dial.FullBacklogListener;
import io.continuum.broker.testing.net.LoopbackListener;
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
 * Subscribe storms from a hostile or merely reconnecting router (bus-protocol-v1.md section 5,
 * R-OPEN): every subscribe is answered exactly once, open + opening streams never exceed
 * {@code max_streams}, refused subscribes dial nothing, at most {@code maxConcurrentDials}
 * publisher connects run at once, and a dial queued behind that bound keeps the 10 s deadline of
 * its subscribe (shrunk here), so it is refused {@code upstream_connect_failed} and never hangs.
 */
class SubscribeStormTest {
    @Test
    void twoThousandSubscribesAreEachAnsweredOnceWithinMaxStreamsAndDuplicatesAreRefused() throws Exception {
        int maxStreams = 100;
        int storm = 2_000;
        int dialBound = 8;
        DialRecorder dials = new DialRecorder();
        try (BrokerHarness h = new BrokerHarness(
                c -> c.timeouts(Brokers.dialing(RelayConfigDefaults.CONNECT_BUDGET, dialBound)),
                r -> r.tcpNoDelay(true).sessionPolicy(hello -> hello == null ? null
                        : SessionAnswer.welcome(-1, -1, maxStreams, -1, -1)), false, dials)) {
            List<LoopbackListener> publishers = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                publishers.add(h.publisher());
            }
            RouterSession session = h.startSession();
            for (long id = 1; id <= storm; id++) {
                LoopbackListener p = publishers.get((int) (id % publishers.size()));
                session.subscribe(id, NAMESPACE, "127.0.0.1", p.port());
                if (id <= maxStreams) {
                    // The same id again while it is opening or open: row 2.
                    session.send(new Frame.Subscribe(id, new Target.ZmqTcp(NAMESPACE, "127.0.0.1", p.port())));
                }
            }
            for (long id = 1; id <= maxStreams; id++) {
                Frame.ClientFrame one = session.awaitAnswer(id, WAIT);
                Frame.ClientFrame other = session.awaitAnswer(id, WAIT);
                boolean openedFirst = one instanceof Frame.StreamOpened;
                Frame.StreamRefused duplicate = assertInstanceOf(Frame.StreamRefused.class, openedFirst ? other : one,
                        "stream " + id);
                assertEquals(Code.DUPLICATE_STREAM, duplicate.code());
                assertInstanceOf(Frame.StreamOpened.class, openedFirst ? one : other, "stream " + id);
            }
            for (long id = maxStreams + 1; id <= storm; id++) {
                Frame.StreamRefused refused = assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(id, WAIT));
                assertEquals(Code.TOO_MANY_STREAMS, refused.code(), "stream " + id);
            }
            assertEquals(maxStreams, h.broker.openStreams());
            assertEquals(maxStreams, h.metrics.get("subscribes_total{result=opened}"));
            assertEquals(storm - maxStreams, h.metrics.get("refusals_total{code=too_many_streams}"));
            assertEquals(maxStreams, h.metrics.get("refusals_total{code=duplicate_stream}"));
            assertEquals(maxStreams, dials.total(), "refused subscribes dial nothing");
            assertTrue(dials.peak() <= dialBound, "peak concurrent dials " + dials.peak());

            // Every publisher closes: one stream_closed each; no second answer for any subscribe came meanwhile.
            List<Socket> upstreams = new ArrayList<>();
            for (LoopbackListener p : publishers) {
                for (int i = 0; i < maxStreams / publishers.size(); i++) {
                    upstreams.add(p.awaitConnection());
                }
            }
            for (Socket s : upstreams) {
                s.close();
            }
            for (long id = 1; id <= maxStreams; id++) {
                long streamId = id;
                assertEquals(Code.UPSTREAM_CLOSED,
                        session.await(Frame.StreamClosed.class, f -> f.streamId() == streamId, WAIT).code());
            }
            await(() -> h.broker.openStreams() == 0, "every stream closed");
            assertTrue(session.drainReceived().stream().noneMatch(f -> f instanceof Frame.StreamOpened
                    || f instanceof Frame.StreamRefused || f instanceof Frame.StreamClosed), "nothing answered twice");
        }
    }

    @Test
    void aThousandBlackholedPublishersAreDialedAtMostBoundAtOnceAndQueuedDialsKeepTheirDeadline() throws Exception {
        int storm = 1_000;
        Duration budget = Duration.ofSeconds(1);
        int dialBound = RelayConfigDefaults.MAX_CONCURRENT_DIALS;
        DialRecorder dials = new DialRecorder();
        try (FullBacklogListener blackhole = new FullBacklogListener(null);
             BrokerHarness h = new BrokerHarness(c -> c.timeouts(Brokers.dialing(budget, dialBound)),
                     r -> r.tcpNoDelay(true), false,
                     dials)) {
            List<String> hosts = new ArrayList<>();
            for (int i = 0; i < storm; i++) {
                // 1,000 distinct advertised publishers, all on one listener whose accept queue is full.
                String host = "127.0." + (1 + i / 250) + "." + (1 + i % 250);
                hosts.add(host);
                h.view.advertise(NAMESPACE, host, blackhole.port());
            }
            RouterSession session = h.startSession();
            long started = System.nanoTime();
            for (int i = 0; i < storm; i++) {
                session.subscribe(i + 1, NAMESPACE, hosts.get(i), blackhole.port());
            }
            Duration sending = Duration.ofNanos(System.nanoTime() - started);
            long lastSent = System.nanoTime();
            for (long id = 1; id <= storm; id++) {
                Frame.StreamRefused refused = assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(id, WAIT));
                assertEquals(Code.UPSTREAM_CONNECT_FAILED, refused.code(), "stream " + id);
            }
            Duration afterLast = Duration.ofNanos(System.nanoTime() - lastSent);
            // Each subscribe's deadline counts from its arrival, so the last answer comes about one budget after
            // the last subscribe; dials queued without their deadline would take storm / bound budgets (16 s).
            assertTrue(afterLast.compareTo(budget.multipliedBy(6)) < 0,
                    "sent in " + sending + ", all refused " + afterLast + " after the last");
            System.out.println("blackholed storm: " + storm + " subscribes sent in " + sending.toMillis()
                    + " ms, all refused " + afterLast.toMillis() + " ms after the last, peak dials " + dials.peak()
                    + ", connects started " + dials.total());
            assertEquals(dialBound, dials.peak(), "the bound was reached and never exceeded");
            assertTrue(dials.total() < storm, "queued dials whose deadline passed never dialed: " + dials.total());
            await(() -> dials.inFlight() == 0, "no connect left behind");
            assertEquals(storm, h.metrics.get("refusals_total{code=upstream_connect_failed}"));
        }
    }

    /** The spec values the storms keep. */
    private static final class RelayConfigDefaults {
        static final Duration CONNECT_BUDGET = io.continuum.broker.relay.api.RelayConfig.Timeouts.SPEC.upstreamConnectTotal();
        static final int MAX_CONCURRENT_DIALS = io.continuum.broker.relay.api.RelayConfig.Timeouts.SPEC.maxConcurrentDials();
    }
}
