package io.continuum.broker.relay.hostile;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.relay.EventBroker;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.router.RawBusRouter.Windows;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A router that answers a data stream with DATA before its response HEADERS (a malformed response, RFC 9113
 * section 8.1) loses that stream only: the broker resets it with PROTOCOL_ERROR, closes its publisher socket and
 * reports {@code stream_closed protocol_error} (docs/protocol.md 8.1). The session, and every other stream on it,
 * go on. Before, Helidon's client ended the whole connection: every stream gone, the session reconnecting.
 */
class MalformedDataStreamResponseTest {
    private static final int PROTOCOL_ERROR = ErrorCode.PROTOCOL_ERROR.code();
    private static final int STREAM_CLOSED = ErrorCode.STREAM_CLOSED.code();

    @Test
    void dataBeforeTheResponseHeadersClosesThatStreamProtocolErrorAndTheSessionGoesOn() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 10);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port())) {
            EventBroker broker = raw.broker();
            RawBusRouter session = RawBusRouter.accept(raw.peer(), WAIT, Windows.OPEN_SESSION_ONLY).sendSessionHead();
            Target target = new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port());
            session.sendPacked(FrameCodec.encode(RawBusRouter.welcome("raw")),
                    FrameCodec.encode(new Frame.Subscribe(5, target)));
            int healthy = session.answerNextDataStream(WAIT);
            Socket healthyUpstream = publisher.awaitConnection();
            session.await(Frame.StreamOpened.class, f -> f.streamId() == 5, WAIT);

            session.send(new Frame.Subscribe(6, target));
            int malformed = nextDataStreamHeaders(session);
            Socket malformedUpstream = publisher.awaitConnection();
            session.wire().sendData(malformed, "body before head".getBytes(StandardCharsets.US_ASCII), false);

            Frame.StreamClosed closed = session.await(Frame.StreamClosed.class, f -> f.streamId() == 6, WAIT);
            assertEquals(Code.PROTOCOL_ERROR, closed.code());
            assertTrue(session.busFrames().stream().anyMatch(f -> f instanceof Frame.StreamOpened o
                    && o.streamId() == 6), "stream_opened came first: the HEADERS were written");
            assertEquals(PROTOCOL_ERROR, resetCode(session, malformed), "RST_STREAM PROTOCOL_ERROR");
            assertEquals(-1, malformedUpstream.getInputStream().read(), "its publisher socket is closed");
            assertEquals(1, raw.metrics().get("stream_closes_total{code=protocol_error}"));

            // the session and the other stream are untouched
            OutputStream toRouter = healthyUpstream.getOutputStream();
            toRouter.write(new byte[] {1, 2, 3});
            await(() -> session.stream(healthy).bytes().length == 3, "publisher to router on the other stream");
            session.wire().sendData(healthy, new byte[] {9, 8}, false);
            InputStream fromRouter = healthyUpstream.getInputStream();
            assertArrayEquals(new byte[] {9, 8}, fromRouter.readNBytes(2), "router to publisher on the other stream");
            assertEquals(1, broker.openStreams());
            assertEquals(0, raw.metrics().get("session_ends_total{reason=connection_lost}"));
            session.send(new Frame.Subscribe(7, target));
            session.answerNextDataStream(WAIT);
            publisher.awaitConnection();
            session.await(Frame.StreamOpened.class, f -> f.streamId() == 7, WAIT);
            await(() -> broker.openStreams() == 2, "a new subscribe on the same session opens");
        }
    }

    /**
     * DATA after the router ended its response (END_STREAM), the publisher's side still open: RST_STREAM
     * STREAM_CLOSED and {@code stream_closed protocol_error}, though the publisher is idle and the stream's
     * downstream pump had finished.
     */
    @Test
    void dataAfterTheRouterEndedItsResponseClosesThatStreamProtocolError() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 10);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port())) {
            EventBroker broker = raw.broker();
            RawBusRouter session = RawBusRouter.accept(raw.peer(), WAIT, Windows.OPEN_SESSION_ONLY).sendSessionHead();
            session.sendPacked(FrameCodec.encode(RawBusRouter.welcome("raw")), FrameCodec.encode(
                    new Frame.Subscribe(5, new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port()))));
            int stream = session.answerNextDataStream(WAIT);
            Socket upstream = publisher.awaitConnection();
            session.await(Frame.StreamOpened.class, f -> f.streamId() == 5, WAIT);
            session.wire().sendData(stream, new byte[] {4, 2}, true);
            InputStream fromRouter = upstream.getInputStream();
            assertArrayEquals(new byte[] {4, 2}, fromRouter.readNBytes(2));
            assertEquals(-1, fromRouter.read(), "half-closed after the router's END_STREAM");

            session.wire().sendData(stream, "more".getBytes(StandardCharsets.US_ASCII), false);

            Frame.StreamClosed closed = session.await(Frame.StreamClosed.class, f -> f.streamId() == 5, WAIT);
            assertEquals(Code.PROTOCOL_ERROR, closed.code());
            assertEquals(STREAM_CLOSED, resetCode(session, stream), "RST_STREAM STREAM_CLOSED");
            await(() -> broker.openStreams() == 0, "the stream is gone");
            assertEquals(0, raw.metrics().get("session_ends_total{reason=connection_lost}"));
            assertTrue(raw.metrics().connected(), "the session goes on");
        }
    }

    /** Steps through the broker's frames to the HEADERS of the next data stream, answering nothing. */
    private static int nextDataStreamHeaders(RawBusRouter session) throws Exception {
        while (true) {
            RawH2Peer.Frame f = session.next(WAIT);
            if (f.type() == RawH2Peer.Frame.HEADERS && f.streamId() != RawBusRouter.SESSION_STREAM) {
                return f.streamId();
            }
        }
    }

    private static int resetCode(RawBusRouter session, int streamId) throws Exception {
        while (true) {
            RawH2Peer.Frame f = session.next(WAIT);
            if (f.type() == RawH2Peer.Frame.RST_STREAM && f.streamId() == streamId) {
                return ByteBuffer.wrap(f.payload()).getInt();
            }
        }
    }
}
