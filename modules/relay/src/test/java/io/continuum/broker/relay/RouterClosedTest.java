package io.continuum.broker.relay;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.relay.transport.TrackingConnector;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * bus-protocol-v1.md section 4 item 3: a router that ends the session's response body
 * (END_STREAM) or resets the session stream ends the session as {@code router_closed}, and the
 * broker reconnects. Played by a
 * raw HTTP/2 peer, frame by frame, because Helidon's server does not end a response whose request
 * body is still open.
 */
@ExtendWith(LeakCheck.class)
class RouterClosedTest {
    @Test
    void endStreamOnTheSessionResponseIsRouterClosed() throws Exception {
        routerEndsTheSession(first -> first.sendData(1, new byte[0], true));
    }

    @Test
    void aResetOfTheSessionStreamIsRouterClosed() throws Exception {
        routerEndsTheSession(first -> first.sendReset(1, ErrorCode.CANCEL.code()));
    }

    /**
     * The router resets the session stream and closes the connection in the same breath (what the demo's
     * {@code r} did under load on Helidon's server): the reset came first on the wire, so the session ended as
     * the router closing it, whichever of the session's reader and the connection's close callback acts first.
     * Before: the close callback, on the connection's reader, usually won and ended it as {@code connection_lost}.
     */
    @Test
    void aResetFollowedAtOnceByTheConnectionClosingIsStillRouterClosed() throws Exception {
        for (int round = 0; round < 5; round++) {
            routerEndsTheSession(first -> {
                first.sendReset(1, ErrorCode.CANCEL.code());
                first.close();
            });
        }
    }

    private interface Ending {
        void end(RawH2Peer.Connection connection) throws Exception;
    }

    private static void routerEndsTheSession(Ending ending) throws Exception {
        try (BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.start(c -> c)) {
            RawH2Peer router = raw.peer();
            CountingMetrics metrics = raw.metrics();
            try (RawBusRouter first = RawBusRouter.acceptSession(router, WAIT)) {
                await(metrics::connected, "welcomed");
                ending.end(first.wire());
                router.accept(WAIT); // the reconnect (throws if none comes)
                await(() -> metrics.get("session_ends_total{reason=router_closed}") == 1, "router_closed counted");
                assertEquals(1, metrics.get("reconnects_total"));
            }
        }
    }
}
