package io.continuum.broker.relay;

import java.net.Socket;
import java.util.Random;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.bus.EndToEnd;
import io.continuum.broker.testing.bus.RouterDataStream;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.net.LoopbackListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * R-BUF 1-4: a router that stops reading one stream overflows that stream's budget without ever
 * blocking the publisher or the other streams; and bus-protocol-v1.md section 6, revocation.
 */
@EndToEnd
@ExtendWith(LeakCheck.class)
@LeakCheck.IgnoreThreads(BrokerHarness.ROUTER_THREADS)
class OverflowAndRevocationTest {
    @Test
    void anUnreadStreamOverflowsAloneWhileAnotherKeepsFlowing() throws Exception {
        try (BrokerHarness h = new BrokerHarness()) {
            LoopbackListener flooding = h.publisher();
            LoopbackListener healthy = h.publisher();
            RouterSession session = h.startSession();
            session.subscribe(1, NAMESPACE, "127.0.0.1", flooding.port());
            Socket flood = flooding.awaitConnection();
            assertInstanceOf(Frame.StreamOpened.class, session.awaitAnswer(1, WAIT));
            h.router.awaitDataStream(1, WAIT); // never read: its window stays closed
            BrokerHarness.OpenStream opened2 = h.open(session, 2, healthy);
            Socket good = opened2.upstream();
            RouterDataStream goodStream = opened2.stream();

            // 4 MiB: more than the window plus the 1 MiB stream budget. The publisher is never blocked.
            byte[] chunk = new byte[64 * 1024];
            Thread flooder = Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 0; i < 64; i++) {
                        flood.getOutputStream().write(chunk);
                    }
                } catch (Exception expected) {
                    // the broker closes the socket on overflow
                }
            });
            Frame.StreamClosed closed = session.await(Frame.StreamClosed.class, f -> f.streamId() == 1, WAIT);
            assertEquals(Code.BUFFER_OVERFLOW, closed.code());
            flooder.join(WAIT.toMillis());
            assertEquals(1, h.metrics.get("overflow_closes_total"));
            assertEquals(1, h.metrics.get("stream_closes_total{code=buffer_overflow}"));
            // chunks of at most 64 KiB + 64 B cannot jump from under 80 % of 1 MiB to over 100 %
            assertEquals(1, h.metrics.get("stream_buffer_near_budget_total"), "the flooded stream came near first");

            byte[] payload = new byte[200_000];
            new Random(7).nextBytes(payload);
            good.getOutputStream().write(payload);
            assertArrayEquals(payload, goodStream.readFromBroker(payload.length), "the other stream kept flowing");
            await(() -> h.broker.openStreams() == 1, "only the healthy stream stays open");
            await(() -> h.broker.bufferedBytes() == 0, "nothing left queued: the overflowed stream's charge released");
            assertEquals(1, h.metrics.get("stream_buffer_near_budget_total"), "the healthy stream never came near");
        }
    }

    @Test
    void aPublisherNoLongerAdvertisedIsRevoked() throws Exception {
        try (BrokerHarness h = new BrokerHarness()) {
            BrokerHarness.Subscribed subscribed = h.startSubscribed(1);
            h.view.withdraw(NAMESPACE, "127.0.0.1", subscribed.publisher().port());
            Frame.StreamClosed closed = subscribed.session().await(Frame.StreamClosed.class, f -> f.streamId() == 1, WAIT);
            assertEquals(Code.TARGET_NOT_ADVERTISED, closed.code());
            assertEquals(-1, subscribed.upstream().getInputStream().read(), "the publisher socket is closed");
        }
    }
}
