package io.continuum.broker.relay;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.bus.EndToEnd;
import io.continuum.broker.testing.bus.RouterDataStream;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.leaks.Census;
import io.continuum.broker.testing.leaks.LeakCheck;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A real ZMQ publisher and subscriber (JeroMQ) talking ZMTP through the tunnel: PUB on the
 * publisher side, the broker, TLS HTTP/2, the router, a loopback bridge, SUB on the router side.
 * The broker never parses ZMTP; the subscription travels router to publisher, the messages back.
 */
@EndToEnd
@ExtendWith(LeakCheck.class)
@LeakCheck.IgnoreThreads(BrokerHarness.ROUTER_THREADS)
class ZmqThroughTunnelTest {
    @Test
    void aSubscriberBehindTheRouterReceivesExactlyWhatItSubscribedToInOrder() throws Exception {
        try (BrokerHarness h = new BrokerHarness(); ZContext zmq = new ZContext()) {
            ZMQ.Socket pub = zmq.createSocket(SocketType.PUB);
            int pubPort = pub.bindToRandomPort("tcp://127.0.0.1");
            h.view.advertise(NAMESPACE, "127.0.0.1", pubPort);
            RouterSession session = h.startSession();
            session.subscribe(42, NAMESPACE, "127.0.0.1", pubPort);
            assertInstanceOf(Frame.StreamOpened.class, session.awaitAnswer(42, WAIT));
            RouterDataStream stream = h.router.awaitDataStream(42, WAIT);

            // The SUB binds and the router's bridge dials it: JeroMQ's connecting side can lose its connection
            // (RouterDataStream#bridgeTo says why).
            ZMQ.Socket sub = zmq.createSocket(SocketType.SUB);
            sub.subscribe("kv-events".getBytes(StandardCharsets.UTF_8));
            h.closeAtEnd(stream.bridgeTo(sub.bindToRandomPort("tcp://127.0.0.1")));

            // PUB/SUB joins asynchronously: publish a marker until the first one arrives.
            byte[] first = null;
            sub.setReceiveTimeOut(100);
            for (int i = 0; i < 200 && first == null; i++) {
                pub.sendMore("kv-events");
                pub.send("warmup");
                first = sub.recv();
            }
            if (first == null) {
                // Say which direction stopped and where every thread waits.
                System.err.println(Census.threadDump());
                fail("the subscription never crossed the tunnel: relayed upstream_to_router="
                        + h.metrics.get("relayed_bytes_total{direction=upstream_to_router}") + " router_to_upstream="
                        + h.metrics.get("relayed_bytes_total{direction=router_to_upstream}") + " open streams="
                        + h.broker.openStreams() + "; router bridge from broker=" + stream.bridgedFromBroker()
                        + " to broker=" + stream.bridgedToBroker());
            }
            assertEquals("kv-events", new String(first, StandardCharsets.UTF_8), "the subscription crossed the tunnel");
            sub.recv(); // its payload
            drain(sub);

            sub.setReceiveTimeOut((int) WAIT.toMillis());
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                pub.sendMore("load-metrics");
                pub.send("not subscribed " + i);
                String body = "{\"event_id\":" + i + ",\"stored\":[" + (i * 7) + "]}";
                pub.sendMore("kv-events");
                pub.send(body);
                expected.add(body);
            }
            for (String body : expected) {
                assertEquals("kv-events", sub.recvStr());
                assertEquals(body, sub.recvStr());
            }
            sub.setReceiveTimeOut(200);
            assertEquals(null, sub.recv(), "nothing the subscriber did not ask for");
        }
    }

    private static void drain(ZMQ.Socket sub) throws IOException {
        sub.setReceiveTimeOut(200);
        while (sub.recv() != null) {
            // late warm-up copies
        }
    }
}
