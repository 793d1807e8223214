package io.continuum.broker.relay;

import java.io.InputStream;
import java.net.Socket;
import java.util.List;

import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawBusRouter.Windows;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Response heads a conforming router may send, from a router on another HTTP/2 stack (issue 54 items 1 and 2): the
 * broker takes each and relays. The router here encodes as Python's {@code hpack} does, indexing every new field,
 * large ones included ({@code RawH2Peer.Connection.indexEveryField}).
 */
class RouterResponseHeadsTest {
    private static final HeaderField STATUS_200 = new HeaderField(":status", "200");

    /**
     * RFC 7541 section 4.4: an entry larger than the table empties the table and is not added; section 6.3: a size
     * update at the start of a block. Both blocks of issue 54 item 1 ({@code 20 40 01 78 01 79}, and one indexed field
     * of name + value + 32 over 4,096 octets): before, the broker's reader spun forever in Helidon's table and the
     * stream never carried a byte.
     */
    @Test
    void aRouterThatIndexesEveryFieldShrinksTheTableToZeroAndSendsFieldsLargerThanItIsRelayed() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 10);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port())) {
            RawBusRouter session = RawBusRouter.accept(raw.peer(), WAIT, Windows.OPEN_SESSION_ONLY);
            session.wire().indexEveryField();
            session.sendSessionHead();
            Target target = new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port());
            session.sendPacked(FrameCodec.encode(RawBusRouter.welcome("indexing")),
                    FrameCodec.encode(new Frame.Subscribe(5, target)));

            session.wire().sizeUpdateBeforeNextBlock(0); // then x: y with incremental indexing
            int first = session.answerNextDataStream(WAIT, List.of(List.of(STATUS_200, new HeaderField("x", "y"))));
            relaysBothWays(session, 5, first, publisher.awaitConnection());

            session.wire().sizeUpdateBeforeNextBlock(4_096);
            session.send(new Frame.Subscribe(6, target));
            HeaderField large = new HeaderField("x-large", "y".repeat(5_000)); // 5,039 octets: larger than the table
            int second = session.answerNextDataStream(WAIT, List.of(List.of(STATUS_200, large)));
            relaysBothWays(session, 6, second, publisher.awaitConnection());

            session.send(new Frame.Subscribe(7, target)); // HPACK is still in step: the next head decodes
            int third = session.answerNextDataStream(WAIT, List.of(List.of(STATUS_200, large)));
            relaysBothWays(session, 7, third, publisher.awaitConnection());
            assertEquals(3, raw.broker().openStreams());
            assertEquals(1, raw.metrics().get("session_attempts_total{result=welcomed}"));
        }
    }

    /**
     * RFC 9113 section 8.1: a response may carry any number of informational (1xx) heads before the final one, and
     * the client reads past them: on the session stream and on every data stream. Before, a 103 was taken as the
     * final response ("router answered HTTP 103").
     */
    @Test
    void informationalHeadsBeforeTheFinalOneAreReadPastOnTheSessionAndOnDataStreams() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 10);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port())) {
            RawBusRouter session = RawBusRouter.accept(raw.peer(), WAIT, Windows.OPEN_SESSION_ONLY);
            session.wire().sendHeaders(RawBusRouter.SESSION_STREAM, false, new HeaderField(":status", "103"),
                    new HeaderField("link", "</style.css>; rel=preload"));
            session.sendSessionHead();
            Target target = new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port());
            session.sendPacked(FrameCodec.encode(RawBusRouter.welcome("early-hints")),
                    FrameCodec.encode(new Frame.Subscribe(5, target)));
            int stream = session.answerNextDataStream(WAIT, List.of(
                    List.of(new HeaderField(":status", "100")),
                    List.of(new HeaderField(":status", "103"), new HeaderField("link", "</a>; rel=preload")),
                    List.of(new HeaderField(":status", "199")),
                    List.of(STATUS_200)));
            relaysBothWays(session, 5, stream, publisher.awaitConnection());
            assertEquals(1, raw.metrics().get("session_attempts_total{result=welcomed}"));
        }
    }

    static void relaysBothWays(RawBusRouter session, long busStreamId, int http2StreamId, Socket upstream)
            throws Exception {
        session.await(Frame.StreamOpened.class, f -> f.streamId() == busStreamId, WAIT);
        upstream.getOutputStream().write(new byte[] {1, 2, 3});
        await(() -> session.stream(http2StreamId).bytes().length == 3, "publisher to router on " + busStreamId);
        session.wire().sendData(http2StreamId, new byte[] {9, 8}, false);
        upstream.setSoTimeout((int) WAIT.toMillis()); // a broker whose reader is stuck fails here, not hangs
        InputStream fromRouter = upstream.getInputStream();
        assertArrayEquals(new byte[] {9, 8}, fromRouter.readNBytes(2), "router to publisher on " + busStreamId);
    }
}
