package io.continuum.broker.relay;

import java.io.OutputStream;
import java.util.Map;
import java.util.function.UnaryOperator;

import io.continuum.broker.testing.bus.Http2Stack;
import io.continuum.broker.testing.leaks.LeakCheck;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 54 item 2 against a real HTTP/2 stack: Netty's {@code codec-http2} sends {@code 103 Early Hints} before the
 * {@code 200} of the session and of the data stream (RFC 9113 section 8.1), and the broker reads past both: welcomed,
 * the stream relays both ways. Before, the session was refused ("router answered HTTP 103"). Always on Netty:
 * Helidon's server has no call that sends an informational head.
 */
@ExtendWith({LeakCheck.class, BrokerHarness.CloseAfterEach.class})
class EarlyHintsEndToEndTest {
    @Test
    void aRouterOnNettyThatSendsEarlyHintsBeforeEvery200IsWelcomedAndRelays() throws Exception {
        BrokerHarness h = new BrokerHarness(UnaryOperator.identity(), r -> r.stack(Http2Stack.NETTY)
                .earlyHints(Map.of("link", "</kv-events>; rel=preload")));
        BrokerHarness.Subscribed s = h.startSubscribed(1);
        OutputStream toRouter = s.upstream().getOutputStream();
        toRouter.write(new byte[] {1, 2, 3});
        toRouter.flush();
        assertArrayEquals(new byte[] {1, 2, 3}, s.stream().readFromBroker(3), "publisher to router");
        s.stream().writeToBroker(new byte[] {7, 8});
        assertArrayEquals(new byte[] {7, 8}, s.upstream().getInputStream().readNBytes(2), "router to publisher");
        assertEquals(1, h.metrics.get("session_attempts_total{result=welcomed}"));
        assertEquals(0, h.metrics.get("session_attempts_total{result=refused}"));
    }
}
