package io.continuum.broker.relay.hostile;

import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.util.Map;
import java.util.OptionalLong;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.relay.CountingMetrics;
import io.continuum.broker.relay.EventBroker;
import io.continuum.broker.relay.MutableView;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.bus.InProcessRouter.SessionAnswer;
import io.continuum.broker.testing.bus.RouterDataStream;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawBusRouter.Windows;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A hostile router sends frames over the limit (bus-protocol-v1.md section 3: {@code N} above
 * {@code max_frame_bytes} is a protocol error). The broker rejects the frame from its 4-byte length
 * prefix alone, ends that session as {@code protocol_error}, closes its streams with it, and
 * reconnects; another broker's session on the same router never notices.
 */
class OversizedFramesTest {
    /** The clamp floor for max_frame_bytes (section 3.2), so the over-limit frame is small. */
    private static final int NEGOTIATED_MAX = 4_096;

    @Test
    void aFrameOverTheNegotiatedLimitEndsOnlyThatSessionAndTheBrokerReconnects() throws Exception {
        try (BrokerHarness h = new BrokerHarness(c -> c, r -> r.sessionPolicy(hello -> hello == null ? null
                : SessionAnswer.welcome(-1, -1, -1, -1, NEGOTIATED_MAX)))) {
            LoopbackListener publisherA = h.publisher();
            LoopbackListener publisherB = h.publisher();
            MutableView viewB = new MutableView().synced(true).advertise(NAMESPACE, "127.0.0.1", publisherB.port());
            CountingMetrics metricsB = new CountingMetrics();
            RouterSession a = h.startSession();
            try (EventBroker brokerB = Brokers.against(h.router.url(), "broker-b", viewB, metricsB)) {
                brokerB.start();
                RouterSession b = h.router.awaitSession(WAIT);
                assertEquals("broker-b", b.hello().clientId());
                BrokerHarness.OpenStream opened2 = h.open(b, 2, publisherB);
                Socket upstreamB = opened2.upstream();
                RouterDataStream streamB = opened2.stream();
                Socket upstreamA = BrokerHarness.subscribeAndAwaitOpened(a, 1, publisherA);

                // A length prefix one over the limit, and a few body bytes: never the whole body.
                a.sendRaw(new byte[] {0, 0, 0x10, 0x01, '{', '"', 't'});
                assertEquals(-1, upstreamA.getInputStream().read(), "the stream ended with the session");
                RouterSession again = h.router.awaitSession(WAIT);
                assertEquals("broker-a", again.hello().clientId());
                await(() -> h.metrics.get("session_ends_total{reason=protocol_error}") == 1, "protocol_error counted");
                assertEquals(1, h.metrics.get("reconnects_total"));

                // The other broker's session and stream never noticed.
                upstreamB.getOutputStream().write(new byte[] {4, 2});
                assertArrayEquals(new byte[] {4, 2}, streamB.readFromBroker(2));
                assertEquals(0, metricsB.get("session_ends_total{reason=protocol_error}"));
                assertEquals(1, metricsB.get("session_attempts_total{result=welcomed}"));
                // And the reconnected session serves subscribes.
                again.subscribe(3, NAMESPACE, "127.0.0.1", publisherA.port());
                assertInstanceOf(Frame.StreamOpened.class, again.awaitAnswer(3, WAIT));
            }
        }
    }

    @Test
    void aLengthPrefixOfTwoToTheThirtyFirstMinusOneAllocatesNothingAndEndsTheSession() throws Exception {
        try (BrokerHarness h = new BrokerHarness()) {
            BrokerHarness.Subscribed subscribed = h.startSubscribed(1);
            long allocatedBefore = totalAllocatedBytes();

            subscribed.session().sendRaw(new byte[] {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff});
            assertEquals(-1, subscribed.upstream().getInputStream().read(), "the stream ended with the session");
            RouterSession again = h.router.awaitSession(WAIT);
            await(() -> h.metrics.get("session_ends_total{reason=protocol_error}") == 1,
                    "protocol_error, not an allocation failure (that would end the session otherwise)");
            long allocated = totalAllocatedBytes() - allocatedBefore;
            // The whole episode, reconnect and TLS handshake included, allocates far less than the 2 GiB announced.
            assertTrue(allocated < 256L * 1024 * 1024, "allocated " + allocated + " bytes");
            again.subscribe(2, NAMESPACE, "127.0.0.1", subscribed.publisher().port());
            assertInstanceOf(Frame.StreamOpened.class, again.awaitAnswer(2, WAIT), "the process is fine");
        }
    }

    @Test
    void theNegotiatedLimitAppliesToTheFrameRightBehindWelcomeInTheSameDataFrame() throws Exception {
        CountingMetrics metrics = new CountingMetrics();
        MutableView view = new MutableView().synced(true);
        try (RawH2Peer peer = RawH2Peer.start(BrokerHarness.SERVER, Map.of());
             EventBroker broker = Brokers.against(peer.busUrl(), "broker-a", view, metrics)) {
            broker.start();
            try (RawBusRouter first = RawBusRouter.accept(peer, WAIT, Windows.OPEN_SESSION_ONLY).sendSessionHead()) {
                byte[] welcome = FrameCodec.encode(new Frame.Welcome(1, "raw", OptionalLong.empty(),
                        OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(),
                        OptionalLong.of(NEGOTIATED_MAX)));
                // A well-formed frame of an unknown type, 1,000 bytes over the limit welcome just set.
                byte[] oversized = FrameCodec.encodeJson("{\"type\":\"padding\",\"pad\":\""
                        + "x".repeat(NEGOTIATED_MAX + 1_000) + "\"}");
                first.sendPacked(welcome, oversized);
                try (RawBusRouter second = RawBusRouter.accept(peer, WAIT, Windows.OPEN_SESSION_ONLY).sendSessionHead()) {
                    await(() -> metrics.get("session_ends_total{reason=protocol_error}") == 1, "protocol_error");
                    assertEquals(1, metrics.get("session_attempts_total{result=welcomed}"),
                            "the session was welcomed, then ended by the oversized frame");
                    assertEquals(0, metrics.get("unknown_frames_total"),
                            "the oversized frame was not accepted as an unknown frame");
                }
            }
        }
    }

    /** Bytes allocated by every thread so far (com.sun.management, reflectively: the module does not read it). */
    private static long totalAllocatedBytes() throws ReflectiveOperationException {
        return (long) Class.forName("com.sun.management.ThreadMXBean").getMethod("getTotalThreadAllocatedBytes")
                .invoke(ManagementFactory.getThreadMXBean());
    }
}
