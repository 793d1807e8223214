package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static io.continuum.broker.relay.transport.TransportFixture.probe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.continuum.broker.testing.await.Poll;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.h2.Http2;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

/**
 * RFC 9113 rules a bus connection keeps, seen by a bare HTTP/2 peer: SETTINGS in any order with unknown ids
 * ignored, an INITIAL_WINDOW_SIZE change moving open streams' windows (below zero too), windows above 2^31-1,
 * a lowered MAX_CONCURRENT_STREAMS, HEADER_TABLE_SIZE honoured by the encoder, CONTINUATION both ways, PING, frames for a stream already reset, and bytes
 * that arrived before a RST_STREAM.
 */
class ConnectionRulesTest {
    private static final int STREAM = 1; // the client's first stream

    @Test
    void settingsComeInAnyOrderAndUnknownIdentifiersAreIgnored() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            Map<Integer, Long> settings = new LinkedHashMap<>();
            settings.put(0xF0, 7L);   // unknown
            settings.put(Http2.SETTINGS_INITIAL_WINDOW_SIZE, 1000L);
            settings.put(Http2.SETTINGS_MAX_CONCURRENT_STREAMS, 5L);
            wire.sendSettings(settings);
            assertTrue(probe(connection).ping(WAIT)); // read in order: the SETTINGS are applied by now
            assertEquals(5, probe(connection).peerMaxConcurrentStreams());
            BusStream stream = open(connection, wire);
            CompletableFuture<Void> writer = writing(stream, 5000);
            Poll.await(() -> wire.dataReceived(STREAM) == 1000, WAIT, "the first 1,000 bytes");
            assertTrue(probe(connection).ping(WAIT));
            assertEquals(1000, wire.dataReceived(STREAM), "the new initial window, no more");
            wire.sendWindowUpdate(STREAM, 4000);
            writer.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            Poll.await(() -> wire.dataReceived(STREAM) == 5000, WAIT, "the rest");
            assertTrue(connection.isOpen());
        }
    }

    @Test
    void anInitialWindowSizeChangeMovesOpenStreamsWindowsEvenBelowZero()
            throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            wire.sendWindowUpdate(0, 1 << 20); // only the stream's window holds the writer back
            BusStream stream = open(connection, wire);
            writing(stream, 65_535).get(WAIT.toMillis(), TimeUnit.MILLISECONDS); // the whole initial window
            wire.sendSettings(Map.of(Http2.SETTINGS_INITIAL_WINDOW_SIZE, 1000L)); // the stream's window is now 1,000 - 65,535: negative
            assertTrue(probe(connection).ping(WAIT));
            CompletableFuture<Void> writer = writing(stream, 600);
            wire.sendWindowUpdate(STREAM, 64_535); // back to 0: still nothing may go
            assertTrue(probe(connection).ping(WAIT));
            assertEquals(65_535, wire.dataReceived(STREAM), "a window of 0 lets nothing through");
            wire.sendWindowUpdate(STREAM, 500);
            Poll.await(() -> wire.dataReceived(STREAM) == 66_035, WAIT, "the 500 granted");
            assertTrue(probe(connection).ping(WAIT));
            assertEquals(66_035, wire.dataReceived(STREAM), "exactly the 500 granted");
            wire.sendWindowUpdate(STREAM, 100);
            writer.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertTrue(connection.isOpen());
        }
    }

    /** RFC 9113 section 6.9.1: a stream error for the stream, the connection goes on. */
    @Test
    void aStreamWindowAbove2To31Minus1ResetsThatStreamWithFlowControlError() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream stream = open(connection, wire);
            BusStream other = connection.open(dataStream(2), WAIT);
            wire.sendWindowUpdate(STREAM, Integer.MAX_VALUE); // 65,535 + 2^31-1
            RawH2Peer.Frame rst = wire.next(f -> f.type() == RawH2Peer.Frame.RST_STREAM, WAIT);
            assertEquals(STREAM, rst.streamId());
            assertEquals(ErrorCode.FLOW_CONTROL_ERROR.code(), ByteBuffer.wrap(rst.payload()).getInt(), "FLOW_CONTROL_ERROR");
            assertThrows(TransportException.class, () -> stream.write(ByteBuffer.wrap(new byte[1])));
            assertTrue(connection.isOpen(), "a stream error: the connection goes on");
            other.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
            Poll.await(() -> wire.dataReceived(3) == 3, WAIT, "the other stream still writes");
        }
    }

    /** As above: the one-owner connection's rule. */
    @Test
    void aConnectionWindowAbove2To31Minus1EndsTheConnectionWithFlowControlError()
            throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            CompletableFuture<TransportException> closed = new CompletableFuture<>();
            connection.onClose(closed::complete);
            wire.sendWindowUpdate(0, Integer.MAX_VALUE);
            RawH2Peer.Frame goAway = wire.next(f -> f.type() == RawH2Peer.Frame.GOAWAY, WAIT);
            assertEquals(ErrorCode.FLOW_CONTROL_ERROR.code(), ByteBuffer.wrap(goAway.payload(), 4, 4).getInt(), "FLOW_CONTROL_ERROR");
            ConnectionLostException lost = assertInstanceOf(ConnectionLostException.class,
                    closed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
            assertEquals(ConnectionLostException.Reason.PROTOCOL, lost.reason());
            assertFalse(connection.isOpen());
        }
    }

    @Test
    void aLoweredMaxConcurrentStreamsHoldsNewOpensUntilEnoughStreamsEnd()
            throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream first = connection.open(dataStream(1), WAIT);
            BusStream second = connection.open(dataStream(2), WAIT);
            wire.sendSettings(Map.of(Http2.SETTINGS_MAX_CONCURRENT_STREAMS, 1L));
            assertTrue(probe(connection).ping(WAIT));
            Duration brief = Duration.ofMillis(200);
            assertThrows(SlotTimeoutException.class, () -> connection.open(dataStream(3), brief));
            first.cancel();
            assertThrows(SlotTimeoutException.class, () -> connection.open(dataStream(3), brief),
                    "one stream still open: the limit is 1");
            second.cancel();
            BusStream third = connection.open(dataStream(3), WAIT);
            assertEquals(5, third.id());
        }
    }

    /**
     * RFC 7541 section 4.2 and RFC 9113 section 6.5.2: a peer that allows no dynamic table gets header blocks that
     * announce the size 0 first and index nothing; the raw peer's decoder refuses a block without that announcement
     * (closing the connection) and holds no table, so a reference into one would fail too.
     */
    @Test
    void aPeerThatAllowsNoDynamicTableGetsBlocksThatIndexNothing() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of(Http2.SETTINGS_HEADER_TABLE_SIZE, 0L));
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            for (int i = 1; i <= 3; i++) { // the same fields again: an encoder keeping a table would index them
                connection.open(dataStream(i), WAIT);
                RawH2Peer.Frame headers = wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
                assertEquals("/bus/v1/streams/" + i, headers.field(":path"));
                assertEquals("session-1", headers.field("continuum-session-id"));
                assertEquals("application/octet-stream", headers.field("content-type"));
            }
            assertTrue(probe(connection).ping(WAIT), "the peer still answers: it read every block");
            assertTrue(connection.isOpen());
        }
    }

    /**
     * A request header of 20,000 bytes, larger than a frame and than the dynamic table: split into CONTINUATION
     * frames, sent as a literal without indexing, and the encoder goes on.
     */
    @Test
    void headerBlocksLargerThanAFrameGoBothWaysAsContinuations() throws Exception {
        String big = "v".repeat(20_000);
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            List<Header> headers = new ArrayList<>(dataStream(1).headers());
            headers.add(Header.of("x-big", big));
            BusStream stream = connection.open(new StreamRequest("POST", "/bus/v1/streams/1", headers), WAIT);
            RawH2Peer.Frame request = wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
            assertEquals(big, request.field("x-big"), "the request's block, reassembled from its CONTINUATIONs");
            wire.sendHeaders(STREAM, false, new HeaderField(":status", "200"), new HeaderField("x-big", big));
            ResponseHead head = stream.awaitResponseHead(WAIT);
            assertEquals(big, head.header("x-big").orElseThrow());
            assertTrue(connection.isOpen());
        }
    }

    @Test
    void aPingIsAcknowledgedWithItsPayload() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            wire.send(RawH2Peer.Frame.PING, 0, 0, ByteBuffer.allocate(8).putLong(0x1234_5678_9ABCL).array());
            RawH2Peer.Frame ack = wire.next(f -> f.type() == RawH2Peer.Frame.PING, WAIT);
            assertEquals(0x1234_5678_9ABCL, ByteBuffer.wrap(ack.payload()).getLong());
            assertTrue(connection.isOpen());
        }
    }

    @Test
    void dataForAStreamAlreadyResetIsIgnoredAndCreditedToTheConnection()
            throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream stream = open(connection, wire);
            wire.sendStatus200(STREAM, false);
            stream.awaitResponseHead(WAIT);
            stream.cancel();
            wire.next(f -> f.type() == RawH2Peer.Frame.RST_STREAM && f.streamId() == STREAM, WAIT);
            wire.sendData(STREAM, new byte[1000], false);
            wire.sendData(STREAM, new byte[1000], true);
            assertTrue(probe(connection).ping(WAIT));
            assertTrue(connection.isOpen());
            assertEquals(0, probe(connection).connectionBytesUncredited(), "the ignored DATA is credited back");
            assertEquals(0, probe(connection).streamsInUse());
        }
    }

    /** Wire order: a session stream whose {@code welcome} is followed by RST_STREAM in one read was welcomed. */
    @Test
    void bytesThatArrivedBeforeAResetAreReadBeforeTheResetIsReported()
            throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream stream = open(connection, wire);
            byte[] welcome = "welcome".getBytes(StandardCharsets.US_ASCII);
            wire.sendTogether(w -> { // one write: on loopback, usually one read of the client's
                w.headers(STREAM, false, List.of(new HeaderField(":status", "200")));
                w.data(STREAM, false, welcome, 0, welcome.length);
                w.rstStream(STREAM, ErrorCode.INTERNAL_ERROR.code());
            });
            assertEquals(200, stream.awaitResponseHead(WAIT).status());
            ByteBuffer chunk = stream.read();
            assertEquals("welcome", StandardCharsets.US_ASCII.decode(chunk).toString());
            stream.release(welcome.length);
            StreamResetException reset = assertThrows(StreamResetException.class, stream::read);
            assertTrue(reset.byPeer());
            assertEquals(ErrorCode.INTERNAL_ERROR.code(), reset.errorCode());
            assertTrue(probe(connection).ping(WAIT));
            assertEquals(0, probe(connection).connectionBytesUncredited());
        }
    }

    private static BusStream open(BusConnection connection, RawH2Peer.Connection wire) throws Exception {
        BusStream stream = connection.open(dataStream(1), WAIT);
        wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == STREAM, WAIT);
        return stream;
    }

    private static CompletableFuture<Void> writing(BusStream stream, int bytes) {
        return CompletableFuture.runAsync(() -> {
            try {
                stream.write(ByteBuffer.wrap(new byte[bytes]));
            } catch (TransportException e) {
                throw new IllegalStateException(e);
            }
        }, runnable -> Thread.ofVirtual().start(runnable));
    }
}
