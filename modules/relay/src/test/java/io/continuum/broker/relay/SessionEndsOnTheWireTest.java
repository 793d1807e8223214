package io.continuum.broker.relay;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.random.RandomGenerator;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.relay.transport.TrackingConnector;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Session outcomes that depend on exactly which bytes arrive in which order (bus-protocol-v1.md sections 2
 * and 4 item 5), played frame by frame on a raw HTTP/2 peer: Helidon's server cannot put two bus frames
 * in one DATA frame on demand, nor close the connection the instant it reads END_STREAM.
 */
@ExtendWith(LeakCheck.class)
class SessionEndsOnTheWireTest {
    private interface Scenario {
        void run(RawH2Peer router, CountingMetrics metrics) throws Exception;
    }

    private static void withBroker(Scenario scenario) throws Exception {
        try (BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.start(c -> c)) {
            scenario.run(raw.peer(), raw.metrics());
        }
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    @Test
    void anErrorFrameFirstRefusesTheAttemptWhateverFollowsInTheSameChunk() throws Exception {
        withBroker((router, metrics) -> {
            byte[] unknown = FrameCodec.encodeJson("{\"type\":\"future_frame\"}");
            byte[] error = FrameCodec.encode(new Frame.ErrorFrame(Code.UNAUTHORIZED, "no", false));
            byte[] malformed = new byte[4]; // N = 0: a protocol error, but after the error frame
            try (RawBusRouter first = RawBusRouter.acceptHello(router, WAIT, RawBusRouter.Windows.GRANT_AS_READ)) {
                first.sendSessionHead();
                first.wire().sendData(RawBusRouter.SESSION_STREAM, concat(unknown, error, malformed), false);
                await(() -> metrics.get("session_ends_total{reason=refused}") == 1, "refused");
                assertEquals(1, metrics.get("session_attempts_total{result=refused}"));
                assertEquals(0, metrics.get("session_ends_total{reason=protocol_error}"));
            }
            try (RawBusRouter second = RawBusRouter.acceptHello(router, WAIT, RawBusRouter.Windows.GRANT_AS_READ)) {
                // A malformed frame with nothing decisive before it is a protocol_error.
                second.sendSessionHead();
                second.wire().sendData(RawBusRouter.SESSION_STREAM, concat(unknown, malformed, error), false);
                await(() -> metrics.get("session_ends_total{reason=protocol_error}") == 1, "protocol_error");
                assertEquals(1, metrics.get("session_ends_total{reason=refused}"));
            }
        });
    }

    @Test
    void aRebalanceDrainEndsDrainedEvenWhenTheRouterClosesTheConnectionRightAfterEndStream() throws Exception {
        withBroker((router, metrics) -> {
            int sessions = 5;
            for (int i = 1; i <= sessions; i++) {
                try (RawBusRouter r = RawBusRouter.acceptSession(router, WAIT)) {
                    await(metrics::connected, "welcomed");
                    r.closeRightAfterSessionEnd();
                    r.send(new Frame.Drain("rebalance", OptionalLong.of(0)));
                    assertTrue(r.awaitSessionRequestEnd(WAIT), "END_STREAM on the session");
                    int ended = i;
                    await(() -> metrics.get("session_ends_total{reason=drained}")
                            + metrics.get("session_ends_total{reason=connection_lost}")
                            + metrics.get("session_ends_total{reason=router_closed}") == ended, "session " + ended + " ended");
                }
            }
            assertEquals(sessions, metrics.get("session_ends_total{reason=drained}"));
            assertEquals(0, metrics.get("session_ends_total{reason=connection_lost}"));
        });
    }
}
