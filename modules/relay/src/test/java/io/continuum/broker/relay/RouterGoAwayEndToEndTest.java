package io.continuum.broker.relay;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.util.function.UnaryOperator;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.bus.Http2Stack;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.leaks.LeakCheck;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The router's graceful GOAWAY end to end, sent by Netty's {@code codec-http2} (which picks the last-stream-id
 * itself: the last stream the broker opened), not by the project's own frame writer as in {@link RouterGoAwayTest}:
 * the open stream relays on both ways, a new subscribe is refused {@code draining}, and once the stream ends the
 * session ends {@code router_closed} and the broker comes back on a new connection. Always on Netty: Helidon's
 * server has no call that sends a graceful GOAWAY.
 */
@ExtendWith({LeakCheck.class, BrokerHarness.CloseAfterEach.class})
class RouterGoAwayEndToEndTest {

    @Test
    void aGracefulGoAwayFromNettyDrainsTheSessionAndTheBrokerComesBack() throws Exception {
        BrokerHarness h = new BrokerHarness(UnaryOperator.identity(), r -> r.stack(Http2Stack.NETTY));
        BrokerHarness.Subscribed s = h.startSubscribed(1);

        h.router.goAway();
        s.session().subscribe(2, NAMESPACE, "127.0.0.1", s.publisher().port());

        Frame.ClientFrame answer = s.session().awaitAnswer(2, WAIT);
        assertEquals(Code.DRAINING, assertInstanceOfRefused(answer).code());
        OutputStream toRouter = s.upstream().getOutputStream();
        toRouter.write(new byte[] {1, 2, 3});
        toRouter.flush();
        assertArrayEquals(new byte[] {1, 2, 3}, s.stream().readFromBroker(3), "publisher to router runs on");
        s.stream().writeToBroker(new byte[] {7, 8});
        assertArrayEquals(new byte[] {7, 8}, s.upstream().getInputStream().readNBytes(2), "router to publisher too");

        s.upstream().close(); // the last stream ends
        Frame.StreamClosed closed = s.session().await(Frame.StreamClosed.class, f -> f.streamId() == 1, WAIT);
        assertEquals(Code.UPSTREAM_CLOSED, closed.code());
        assertTrue(s.session().awaitEnded(WAIT), "the broker ended its session request");
        RouterSession next = h.router.awaitSession(WAIT); // a new connection: the GOAWAY ended only the old one
        assertEquals("broker-a", next.hello().clientId());
        await(() -> h.metrics.get("session_ends_total{reason=router_closed}") == 1, "router_closed counted");
        assertEquals(0, h.metrics.get("session_ends_total{reason=connection_lost}"));
    }

    private static Frame.StreamRefused assertInstanceOfRefused(Frame.ClientFrame answer) {
        if (answer instanceof Frame.StreamRefused refused) {
            return refused;
        }
        throw new AssertionError("a subscribe after the GOAWAY was not refused: " + answer);
    }
}
