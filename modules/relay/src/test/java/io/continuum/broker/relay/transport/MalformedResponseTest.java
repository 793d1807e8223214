package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

/**
 * RFC 9113 section 8.1: a response is HEADERS, then DATA, and nothing after its END_STREAM. A peer that sends a
 * stream's DATA before its response HEADERS has sent a malformed response, which section 8.1.1 answers with a
 * stream error of type PROTOCOL_ERROR; DATA after END_STREAM is a stream error STREAM_CLOSED (section 5.1).
 * The transport resets only that stream, and the connection and its other streams go on.
 */
class MalformedResponseTest {
    private static final int MALFORMED = 1;
    private static final int OTHER = 3;
    private static final int PROTOCOL_ERROR = ErrorCode.PROTOCOL_ERROR.code();
    private static final int STREAM_CLOSED = ErrorCode.STREAM_CLOSED.code();
    private static final byte[] BODY = "the whole body".getBytes(StandardCharsets.US_ASCII);

    @Test
    void dataBeforeTheResponseHeadersResetsThatStreamWithProtocolErrorAndNothingElse() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            ConnectionProbe h = TransportFixture.probe(connection);
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream malformed = connection.open(dataStream(1), WAIT);
            BusStream other = connection.open(dataStream(2), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == OTHER, WAIT);

            wire.sendData(MALFORMED, new byte[700], false);

            MalformedResponseException thrown = assertThrows(MalformedResponseException.class,
                    () -> malformed.awaitResponseHead(WAIT));
            assertTrue(thrown.getMessage().contains("DATA before the response HEADERS"), thrown.getMessage());
            assertEquals(PROTOCOL_ERROR, resetCode(wire, MALFORMED), "RST_STREAM PROTOCOL_ERROR");
            assertThrows(MalformedResponseException.class, () -> malformed.write(ByteBuffer.wrap(new byte[] {1})),
                    "every later call on the stream says why it ended");

            // what the peer sends for it later, not having seen the reset yet, is ignored like any late frame
            wire.sendStatus200(MALFORMED, false);
            wire.sendData(MALFORMED, new byte[300], true);
            assertOnlyThatStreamEnded(h, wire, other);
        }
    }

    /**
     * The stream's HEADERS are on the wire and the open has not returned yet when its malformed DATA arrives: the
     * open returns a stream that already says why it ended.
     */
    @Test
    void dataBeforeTheResponseHeadersOfAStreamStillBeingOpenedResetsItOnceRegistered() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            ConnectionProbe h = TransportFixture.probe(connection);
            RawH2Peer.Connection wire = peer.accept(WAIT);
            AtomicBoolean hookRan = new AtomicBoolean();
            h.afterHeadersWritten(() -> {
                h.afterHeadersWritten(null);
                try {
                    wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == MALFORMED, WAIT);
                    wire.sendData(MALFORMED, new byte[500], false);
                    wire.sendData(MALFORMED, new byte[200], false);
                    h.ping(WAIT);
                    h.ping(WAIT); // the second acknowledgement is read after the DATA: the reader has handled it
                    hookRan.set(true);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            BusStream malformed = connection.open(dataStream(1), WAIT);
            assertTrue(hookRan.get(), "the DATA arrived between the HEADERS write and the registration");
            assertThrows(MalformedResponseException.class, () -> malformed.awaitResponseHead(WAIT));
            assertEquals(PROTOCOL_ERROR, resetCode(wire, MALFORMED), "RST_STREAM PROTOCOL_ERROR");

            BusStream other = connection.open(dataStream(2), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == OTHER, WAIT);
            assertOnlyThatStreamEnded(h, wire, other);
        }
    }

    /**
     * RFC 9113 section 5.1: DATA on a half-closed (remote) stream, after the response's END_STREAM while the request
     * is still open, is a stream error STREAM_CLOSED: that stream is reset, the connection goes on.
     */
    @Test
    void dataAfterTheResponsesEndStreamResetsThatStreamWithStreamClosed() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            ConnectionProbe h = TransportFixture.probe(connection);
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream ended = connection.open(dataStream(1), WAIT);
            BusStream other = connection.open(dataStream(2), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == OTHER, WAIT);
            answerWholly(wire, ended);
            assertEquals(BODY.length, ended.read().remaining());
            ended.release(BODY.length);
            assertEquals(null, ended.read(), "the response ended; the request goes on");

            wire.sendData(MALFORMED, new byte[400], false);

            assertTrue(ended.awaitClosed(WAIT), "the stream is reset");
            MalformedResponseException failure = assertInstanceOf(MalformedResponseException.class, ended.failure());
            assertTrue(failure.getMessage().contains("DATA after the response's END_STREAM; reset STREAM_CLOSED"),
                    failure.getMessage());
            assertEquals(STREAM_CLOSED, resetCode(wire, MALFORMED), "RST_STREAM STREAM_CLOSED");
            assertThrows(MalformedResponseException.class, () -> ended.write(ByteBuffer.wrap(new byte[] {1})));
            assertOnlyThatStreamEnded(h, wire, other);
        }
    }

    /**
     * DATA after END_STREAM on a stream both sides have ended, before the reader has taken that end: the stream is
     * closed, and the frame is ignored (RFC 9113 section 5.1 allows it), never a connection error.
     */
    @Test
    void dataAfterTheEndOfAStreamFinishedBothWaysIsIgnored() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            ConnectionProbe h = TransportFixture.probe(connection);
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream finished = connection.open(dataStream(1), WAIT);
            BusStream other = connection.open(dataStream(2), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == OTHER, WAIT);
            finished.endRequest();
            answerWholly(wire, finished);
            assertTrue(finished.awaitClosed(WAIT), "both sides ended");

            wire.sendData(MALFORMED, new byte[400], false);
            assertTrue(h.ping(WAIT));
            assertTrue(h.ping(WAIT), "the second acknowledgement is read after the late DATA");
            assertTrue(connection.isOpen(), "DATA on a closed stream must not end the connection");

            ByteBuffer chunk = finished.read();
            assertEquals(BODY.length, chunk.remaining(), "the body before the end is intact");
            finished.release(BODY.length);
            assertEquals(null, finished.read());
            assertOnlyThatStreamEnded(h, wire, other);
        }
    }

    /** The usual order, HEADERS then DATA, even back to back in one read, is never mistaken for the malformed one. */
    @Test
    void dataRightBehindTheResponseHeadersIsTheBody() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream stream = connection.open(dataStream(1), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == MALFORMED, WAIT);
            byte[] body = "body".getBytes(StandardCharsets.US_ASCII);
            wire.sendTogether(w -> {
                w.headers(MALFORMED, false, List.of(new HeaderField(":status", "200")));
                w.data(MALFORMED, false, body, 0, body.length);
            });
            assertEquals(200, stream.awaitResponseHead(WAIT).status());
            ByteBuffer chunk = stream.read();
            assertEquals(body.length, chunk.remaining());
            assertTrue(connection.isOpen());
        }
    }

    /** The peer answers the stream 200 and its whole body, {@link #BODY}, with END_STREAM. */
    private static void answerWholly(RawH2Peer.Connection wire, BusStream stream) throws Exception {
        wire.sendStatus200(MALFORMED, false);
        assertEquals(200, stream.awaitResponseHead(WAIT).status());
        wire.sendData(MALFORMED, BODY, true);
    }

    private static int resetCode(RawH2Peer.Connection wire, int streamId) throws Exception {
        return ByteBuffer.wrap(wire.next(f -> f.type() == RawH2Peer.Frame.RST_STREAM && f.streamId() == streamId,
                WAIT).payload()).getInt();
    }

    /**
     * The stream the peer broke the rules on is gone, and nothing else is: the connection answers, the other
     * stream works both ways, every DATA byte (dropped, ignored or read) is credited back to the connection window,
     * and no stream slot is left in use.
     */
    private static void assertOnlyThatStreamEnded(ConnectionProbe h, RawH2Peer.Connection wire, BusStream other)
            throws Exception {
        assertOtherStreamWorks(wire, other);
        assertTrue(h.ping(WAIT), "the connection still answers");
        assertTrue(h.isOpen());
        assertEquals(0, h.connectionBytesUncredited(), "every DATA byte is credited back to the connection window");
        assertEquals(0, h.streamsInUse());
    }

    private static void assertOtherStreamWorks(RawH2Peer.Connection wire, BusStream other) throws Exception {
        wire.sendStatus200(OTHER, false);
        assertEquals(200, other.awaitResponseHead(WAIT).status());
        byte[] payload = "still flowing".getBytes(StandardCharsets.US_ASCII);
        wire.sendData(OTHER, payload, true);
        ByteBuffer chunk = other.read();
        assertEquals(payload.length, chunk.remaining());
        other.release(payload.length);
        other.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        other.endRequest();
        RawH2Peer.Frame data = wire.next(f -> f.type() == RawH2Peer.Frame.DATA && f.streamId() == OTHER, WAIT);
        assertEquals(3, data.payload().length);
        assertEquals(null, other.read());
    }
}
