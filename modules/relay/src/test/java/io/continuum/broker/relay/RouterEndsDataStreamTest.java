package io.continuum.broker.relay;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.Socket;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * bus-protocol-v1.md section 6, "Router ends the response body: the client half-closes (shutdownOutput) the
 * publisher socket and keeps relaying publisher → router until EOF". Played by a raw HTTP/2 router: Helidon's
 * server resets a stream whose response has ended instead of reading the rest of its request body, so with it
 * the second half of the rule cannot be observed.
 */
@ExtendWith(LeakCheck.class)
class RouterEndsDataStreamTest {

    @Test
    void routerEndingItsBodyHalfClosesThePublisherAndTheRelayGoesOnUntilThePublisherCloses() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 50);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(
                     publisher.port())) {
            RawH2Peer peer = raw.peer();
            EventBroker broker = raw.broker();
            try (RawBusRouter router = RawBusRouter.acceptSession(peer, WAIT)) {
                router.subscribe(9, NAMESPACE, "127.0.0.1", publisher.port());
                try (Socket upstream = publisher.awaitConnection()) {
                    router.await(Frame.StreamOpened.class, f -> f.streamId() == 9, WAIT);
                    int h2 = 3; // the first data stream on the connection
                    await(() -> router.stream(h2).headers(), "data stream HEADERS");

                    router.wire().sendStatus200(h2, false);
                    router.wire().sendData(h2, new byte[] {7}, true);
                    InputStream fromBroker = upstream.getInputStream();
                    assertEquals(7, fromBroker.read());
                    assertEquals(-1, fromBroker.read(), "shutdownOutput reached the publisher");
                    assertTrue(raw.metrics().connected(), "the session is untouched");
                    assertEquals(1, broker.openStreams(), "a half-close is not a close");

                    upstream.getOutputStream().write(new byte[] {4, 5});
                    await(() -> router.stream(h2).bytes().length == 2, "publisher bytes after the half-close");
                    assertArrayEquals(new byte[] {4, 5}, router.stream(h2).bytes());
                    assertFalse(router.stream(h2).requestEnded());
                    assertTrue(router.drainFromBroker().stream().noneMatch(f -> f instanceof Frame.StreamClosed),
                            "nothing is reported for the half-close");

                    upstream.close();
                    Frame.StreamClosed closed = router.await(Frame.StreamClosed.class, f -> f.streamId() == 9, WAIT);
                    assertEquals(Code.UPSTREAM_CLOSED, closed.code());
                    await(() -> router.stream(h2).requestEnded(), "END_STREAM on the request body");
                    await(() -> broker.openStreams() == 0, "stream gone");
                }
            }
        }
    }
    /**
     * Section 6, "Router resets the data stream: the client closes the publisher socket and reports nothing", also
     * after the router ended its body: the publisher is idle, so only the reset itself can close the stream.
     */
    @Test
    void aResetAfterTheRouterEndedItsBodyClosesTheIdlePublishersStream() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 50);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(
                     publisher.port())) {
            EventBroker broker = raw.broker();
            try (RawBusRouter router = RawBusRouter.acceptSession(raw.peer(), WAIT)) {
                router.subscribe(9, NAMESPACE, "127.0.0.1", publisher.port());
                try (Socket upstream = publisher.awaitConnection()) {
                    router.await(Frame.StreamOpened.class, f -> f.streamId() == 9, WAIT);
                    int h2 = 3;
                    await(() -> router.stream(h2).headers(), "data stream HEADERS");
                    router.wire().sendStatus200(h2, false);
                    router.wire().sendData(h2, new byte[0], true);
                    assertEquals(-1, upstream.getInputStream().read(), "half-closed");

                    router.wire().sendReset(h2, ErrorCode.CANCEL.code());
                    await(() -> broker.openStreams() == 0, "the reset closed the stream");
                    assertTrue(raw.metrics().connected(), "the session is untouched");
                    assertTrue(router.drainFromBroker().stream().noneMatch(f -> f instanceof Frame.StreamClosed),
                            "a reset by the router is reported by nothing");
                }
            }
        }
    }
}
