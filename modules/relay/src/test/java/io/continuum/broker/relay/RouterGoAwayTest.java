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
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.router.RawBusRouter.Windows;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A router's graceful GOAWAY (HTTP/2 NO_ERROR) is its drain at the connection's level, not a dropped connection
 * (docs/protocol.md section 1): the streams it processed run on until they end, a {@code subscribe} behind it is
 * refused {@code draining}, and once the streams are gone the session ends its request body and ends as
 * {@code router_closed}; then the usual reconnect. A GOAWAY with an error code still ends everything at once.
 */
@ExtendWith(LeakCheck.class)
class RouterGoAwayTest {

    @Test
    void openStreamsRunOnNewSubscribesAreRefusedDrainingAndTheSessionEndsRouterClosed() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 10);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port());
             Opened opened = Opened.stream5(raw, publisher)) {
            CountingMetrics metrics = raw.metrics();
            RawBusRouter session = opened.session();
            int data = opened.data();
            Socket upstream = opened.upstream();

            session.wire().sendGoAway(data, ErrorCode.NO_ERROR.code());
            session.send(new Frame.Subscribe(6, opened.target())); // read by the broker behind the GOAWAY

            Frame.StreamRefused refused = session.await(Frame.StreamRefused.class, f -> f.streamId() == 6, WAIT);
            assertEquals(Code.DRAINING, refused.code());
            upstream.getOutputStream().write(new byte[] {1, 2, 3});
            await(() -> session.stream(data).bytes().length == 3, "publisher to router on the processed stream");
            session.wire().sendData(data, new byte[] {9, 8}, false);
            InputStream fromRouter = upstream.getInputStream();
            assertArrayEquals(new byte[] {9, 8}, fromRouter.readNBytes(2), "router to publisher on it");
            assertFalse(session.awaitSessionRequestEnd(java.time.Duration.ZERO), "the session runs on meanwhile");
            assertEquals(0, metrics.get("session_ends_total{reason=connection_lost}"));
            assertEquals(0, publisher.pendingConnections(), "no dial for the refused subscribe");

            upstream.close(); // the last stream ends: the session ends its side, then ends as router_closed
            Frame.StreamClosed closed = session.await(Frame.StreamClosed.class, f -> f.streamId() == 5, WAIT);
            assertEquals(Code.UPSTREAM_CLOSED, closed.code());
            assertTrue(session.awaitSessionRequestEnd(WAIT), "END_STREAM on the session request body");
            session.wire().sendData(RawBusRouter.SESSION_STREAM, new byte[0], true);

            raw.peer().accept(WAIT); // the reconnect
            await(() -> metrics.get("session_ends_total{reason=router_closed}") == 1, "router_closed counted");
            assertEquals(0, metrics.get("session_ends_total{reason=connection_lost}"));
            RawH2Peer.Frame ours;
            do {
                ours = session.next(WAIT);
            } while (ours.type() != RawH2Peer.Frame.GOAWAY);
            assertEquals(0, java.nio.ByteBuffer.wrap(ours.payload(), 4, 4).getInt(), "our GOAWAY: NO_ERROR");
        }
    }

    /**
     * A data stream above the GOAWAY's last-stream-id was never processed by the router, though it had its
     * {@code subscribe} and {@code stream_opened}: it is closed {@code draining} (the router has no other way to
     * learn of its end), its publisher socket closes, and the session then ends as above.
     */
    @Test
    void aStreamAboveTheLastStreamIdIsClosedDraining() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 10);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port());
             Opened opened = Opened.stream5(raw, publisher)) {
            RawBusRouter session = opened.session();
            Socket upstream = opened.upstream();

            session.wire().sendGoAway(RawBusRouter.SESSION_STREAM, ErrorCode.NO_ERROR.code()); // only the session stream was processed

            Frame.StreamClosed closed = session.await(Frame.StreamClosed.class, f -> f.streamId() == 5, WAIT);
            assertEquals(Code.DRAINING, closed.code());
            assertEquals(-1, upstream.getInputStream().read(), "its publisher socket is closed");
            assertTrue(session.awaitSessionRequestEnd(WAIT), "END_STREAM on the session request body");
            session.wire().sendData(RawBusRouter.SESSION_STREAM, new byte[0], true);
            raw.peer().accept(WAIT);
            await(() -> raw.metrics().get("session_ends_total{reason=router_closed}") == 1, "router_closed counted");
        }
    }

    @Test
    void aGoAwayWithAnErrorCodeEndsTheSessionAtOnce() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 10);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port());
             Opened opened = Opened.stream5(raw, publisher)) {
            opened.session().wire().sendGoAway(opened.data(), ErrorCode.INTERNAL_ERROR.code());

            assertEquals(-1, opened.upstream().getInputStream().read(), "the publisher socket closes with the session");
            raw.peer().accept(WAIT);
            await(() -> raw.metrics().get("session_ends_total{reason=connection_lost}") == 1, "connection_lost");
        }
    }

    /** A raw router's session, welcomed, with bus stream 5 open to the publisher end to end. */
    private record Opened(RawBusRouter session, Target target, int data, Socket upstream) implements AutoCloseable {
        static Opened stream5(BrokerHarness.RawPeerBroker raw, LoopbackListener publisher) throws Exception {
            RawBusRouter session = RawBusRouter.accept(raw.peer(), WAIT, Windows.OPEN_SESSION_ONLY).sendSessionHead();
            Target target = new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port());
            session.sendPacked(FrameCodec.encode(RawBusRouter.welcome("raw")),
                    FrameCodec.encode(new Frame.Subscribe(5, target)));
            int data = session.answerNextDataStream(WAIT);
            Socket upstream = publisher.awaitConnection();
            session.await(Frame.StreamOpened.class, f -> f.streamId() == 5, WAIT);
            return new Opened(session, target, data, upstream);
        }

        @Override
        public void close() {
            session.close();
        }
    }
}
