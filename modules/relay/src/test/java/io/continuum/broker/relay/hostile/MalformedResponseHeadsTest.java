package io.continuum.broker.relay.hostile;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.router.RawBusRouter.Windows;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 54 items 2 and 3: a data stream's response head that RFC 9113 makes malformed, or that decodes past the
 * broker's SETTINGS_MAX_HEADER_LIST_SIZE (64 KiB), is a stream error on that stream alone: RST_STREAM PROTOCOL_ERROR
 * and {@code stream_closed protocol_error} ({@code stream_opened} was already sent), as for DATA before the head
 * ({@link MalformedDataStreamResponseTest}). The session, and a stream opened after it, go on: never a
 * COMPRESSION_ERROR for the connection. On the session stream the same heads end the attempt {@code failed} /
 * {@code connect_failed} (bus-protocol-v1.md section 2).
 */
class MalformedResponseHeadsTest {
    private static final int PROTOCOL_ERROR = ErrorCode.PROTOCOL_ERROR.code();
    private static final int STREAM_CLOSED = ErrorCode.STREAM_CLOSED.code();

    static Stream<Arguments> malformedHeads() {
        List<HeaderField> overLimit = new ArrayList<>(List.of(status("200")));
        for (int i = 0; i < 20; i++) { // 20 x (10 + 4,000 + 32) octets: over 64 KiB decoded
            overLimit.add(new HeaderField("x-filler-" + (char) ('a' + i), "v".repeat(4_000)));
        }
        return Stream.of(
                Arguments.of("8.2.1: an upper-case field name", List.of(status("200"), field("Content-Type", "x"))),
                Arguments.of("8.2.1: a field name with a space", List.of(status("200"), field("x y", "z"))),
                Arguments.of("8.2.1: a value with a line feed", List.of(status("200"), field("x", "a\nb"))),
                Arguments.of("8.2.1: a value with leading whitespace", List.of(status("200"), field("x", " a"))),
                Arguments.of("8.2.2: a connection-specific field", List.of(status("200"), field("connection", "close"))),
                Arguments.of("8.2.2: transfer-encoding", List.of(status("200"), field("transfer-encoding", "chunked"))),
                Arguments.of("8.2.2: te other than trailers", List.of(status("200"), field("te", "gzip"))),
                Arguments.of("8.3: :status repeated", List.of(status("200"), status("200"))),
                Arguments.of("8.3: :status after a regular field", List.of(field("x", "y"), status("200"))),
                Arguments.of("8.3.2: a request pseudo-header in a response", List.of(status("200"), field(":path", "/"))),
                Arguments.of("8.3.2: an unknown pseudo-header", List.of(status("200"), field(":foo", "bar"))),
                Arguments.of("8.3.2: no :status", List.of(field("content-type", "x"))),
                Arguments.of("8.3.2: :status of four digits", List.of(status("2000"))),
                Arguments.of("8.3.2: :status not a number", List.of(status("abc"))),
                Arguments.of("8.6: 101 is not allowed in HTTP/2", List.of(status("101"))),
                Arguments.of("6.5.2: a header list over SETTINGS_MAX_HEADER_LIST_SIZE", overLimit));
    }

    @ParameterizedTest(name = "RFC 9113 {0}")
    @MethodSource("malformedHeads")
    void aMalformedDataStreamHeadResetsThatStreamAndTheSessionGoesOn(String rule, List<HeaderField> head)
            throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 10);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port())) {
            RawBusRouter session = welcomed(raw);
            Target target = new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port());
            session.send(new Frame.Subscribe(5, target));
            int stream = session.answerNextDataStream(WAIT, List.of(head));
            publisher.awaitConnection();
            assertStreamClosedProtocolError(session, raw, 5, stream, PROTOCOL_ERROR);
            assertTheSessionGoesOn(session, raw, target);
        }
    }

    /** RFC 9113 section 8.1: an informational head with END_STREAM is malformed. */
    @Test
    void anInformationalHeadWithEndStreamResetsThatStream() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 10);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port())) {
            RawBusRouter session = welcomed(raw);
            Target target = new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port());
            session.send(new Frame.Subscribe(5, target));
            int stream = session.awaitDataStreamHeaders(WAIT);
            session.wire().sendHeaders(stream, true, status("103"));
            publisher.awaitConnection();
            assertStreamClosedProtocolError(session, raw, 5, stream, PROTOCOL_ERROR);
            assertTheSessionGoesOn(session, raw, target);
        }
    }

    /** RFC 9113 section 5.1: after the response's END_STREAM (half-closed remote), HEADERS are STREAM_CLOSED. */
    @Test
    void headersAfterTheResponsesEndStreamResetThatStreamStreamClosed() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 10);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port())) {
            RawBusRouter session = welcomed(raw);
            Target target = new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port());
            session.send(new Frame.Subscribe(5, target));
            int stream = session.answerNextDataStream(WAIT);
            publisher.awaitConnection();
            session.await(Frame.StreamOpened.class, f -> f.streamId() == 5, WAIT);
            session.wire().sendHeaders(stream, true, field("x-trailer", "1")); // trailers: END_STREAM
            session.wire().sendHeaders(stream, true, field("x-trailer", "2"));
            assertStreamClosedProtocolError(session, raw, 5, stream, STREAM_CLOSED);
            assertTheSessionGoesOn(session, raw, target);
        }
    }

    /** bus-protocol-v1.md section 2: the session stream's head is the HTTP/2 layer's: a bad one is {@code failed}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedSessionHeads")
    void aMalformedSessionHeadEndsTheAttemptFailedConnectFailed(String rule, List<HeaderField> head) throws Exception {
        try (BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.start(c -> c)) {
            RawBusRouter session = RawBusRouter.accept(raw.peer(), WAIT, Windows.OPEN_SESSION_ONLY);
            session.wire().sendHeaders(RawBusRouter.SESSION_STREAM, false, head.toArray(HeaderField[]::new));
            await(() -> raw.metrics().get("session_ends_total{reason=connect_failed}") == 1, "connect_failed");
            assertEquals(1, raw.metrics().get("session_attempts_total{result=failed}"));
            assertEquals(0, raw.metrics().get("session_attempts_total{result=refused}"));
        }
    }

    static Stream<Arguments> malformedSessionHeads() {
        return Stream.of(
                Arguments.of("RFC 9113 8.6: 101", List.of(status("101"))),
                Arguments.of("RFC 9113 8.2.1: an upper-case name", List.of(status("200"), field("Content-Type",
                        "application/x-continuum-bus"))),
                Arguments.of("RFC 9113 8.3: :status after a regular field", List.of(field("content-type",
                        "application/x-continuum-bus"), status("200"))));
    }

    private static RawBusRouter welcomed(BrokerHarness.RawPeerBroker raw) throws Exception {
        RawBusRouter session = RawBusRouter.accept(raw.peer(), WAIT, Windows.OPEN_SESSION_ONLY).sendSessionHead();
        session.sendPacked(FrameCodec.encode(RawBusRouter.welcome("raw")));
        await(() -> raw.metrics().connected(), "welcomed");
        return session;
    }

    private static void assertStreamClosedProtocolError(RawBusRouter session, BrokerHarness.RawPeerBroker raw,
                                                        long busStreamId, int http2StreamId, int resetCode)
            throws Exception {
        Frame.StreamClosed closed = session.await(Frame.StreamClosed.class, f -> f.streamId() == busStreamId, WAIT);
        assertEquals(Code.PROTOCOL_ERROR, closed.code());
        assertTrue(session.busFrames().stream().anyMatch(f -> f instanceof Frame.StreamOpened o
                && o.streamId() == busStreamId), "stream_opened came first");
        assertEquals(resetCode, resetCode(session, http2StreamId));
        assertEquals(1, raw.metrics().get("stream_closes_total{code=protocol_error}"));
    }

    /** No connection error: the session is still welcomed, and a new subscribe opens and carries a head. */
    private static void assertTheSessionGoesOn(RawBusRouter session, BrokerHarness.RawPeerBroker raw, Target target)
            throws Exception {
        session.send(new Frame.Subscribe(9, target));
        session.answerNextDataStream(WAIT);
        session.await(Frame.StreamOpened.class, f -> f.streamId() == 9, WAIT);
        await(() -> raw.broker().openStreams() == 1, "the next stream opens");
        assertEquals(0, raw.metrics().get("session_ends_total{reason=connection_lost}"));
        assertEquals(0, raw.metrics().get("session_ends_total{reason=protocol_error}"));
        assertEquals(1, raw.metrics().get("session_attempts_total{result=welcomed}"));
    }

    private static int resetCode(RawBusRouter session, int streamId) throws Exception {
        while (true) {
            RawH2Peer.Frame f = session.next(WAIT);
            if (f.type() == RawH2Peer.Frame.RST_STREAM && f.streamId() == streamId) {
                return ByteBuffer.wrap(f.payload()).getInt();
            }
        }
    }

    private static HeaderField status(String code) {
        return new HeaderField(":status", code);
    }

    private static HeaderField field(String name, String value) {
        return new HeaderField(name, value);
    }
}
