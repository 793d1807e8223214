package io.continuum.broker.relay.transport;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.Http2;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.assertGoAway;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static io.continuum.broker.relay.transport.TransportFixture.probe;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 54 item 4: what RFC 9113 makes a client enforce on a server, each rule named with its section. The codec's
 * reader also serves the test peers as servers: these rules are the bus connection's (the client role), apart.
 */
class ClientRoleRulesTest {
    private static final int PROTOCOL_ERROR = ErrorCode.PROTOCOL_ERROR.code();
    private static final int END_HEADERS = Http2.FLAG_END_HEADERS;
    private static final int PRIORITY_FLAG = 0x20;

    /** Section 3.4: the server's connection preface is a SETTINGS frame, its first frame. */
    @Test
    void section3_4_aServerWhoseFirstFrameIsNotSettingsFailsTheConnectProtocolError() throws Exception {
        try (RawH2Peer peer = RawH2Peer.startWritingFirst(TransportFixture.SERVER, w -> w.ping(false, 7))) {
            BusConnectException e = assertThrows(BusConnectException.class,
                    () -> TransportFixture.connector().connect(endpoint(peer.busUrl())));
            assertEquals(BusConnectException.Kind.HTTP2, e.kind(), e.getMessage());
            assertGoAway(peer.accept(WAIT), PROTOCOL_ERROR);
        }
    }

    /** Section 6.5.2: a server must not send SETTINGS_ENABLE_PUSH other than 0; a client treats it as PROTOCOL_ERROR. */
    @Test
    void section6_5_2_enablePushOfOneFromAServerFailsTheConnectProtocolError() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of(Http2.SETTINGS_ENABLE_PUSH, 1L))) {
            BusConnectException e = assertThrows(BusConnectException.class,
                    () -> TransportFixture.connector().connect(endpoint(peer.busUrl())));
            assertEquals(BusConnectException.Kind.HTTP2, e.kind(), e.getMessage());
            assertGoAway(peer.accept(WAIT), PROTOCOL_ERROR);
        }
    }

    @Test
    void section6_5_2_enablePushOfZeroFromAServerIsTaken() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of(Http2.SETTINGS_ENABLE_PUSH, 0L));
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            assertTrue(probe(connection).ping(WAIT));
        }
    }

    static Stream<Arguments> framesOnStreamsNeverOpened() {
        return Stream.of(
                Arguments.of("DATA on stream 3, above the highest opened (1)", Http2.TYPE_DATA, 3, new byte[] {1}),
                Arguments.of("HEADERS on stream 2 (even: only a server's push opens one)", Http2.TYPE_HEADERS, 2, hex("88")),
                Arguments.of("WINDOW_UPDATE on stream 5", Http2.TYPE_WINDOW_UPDATE, 5, new byte[] {0, 0, 0, 1}),
                Arguments.of("RST_STREAM on stream 7", Http2.TYPE_RST_STREAM, 7, new byte[] {0, 0, 0, 8}),
                Arguments.of("DATA on stream 4", Http2.TYPE_DATA, 4, new byte[] {1}));
    }

    /** Section 5.1: a frame other than PRIORITY on an idle stream is a connection error PROTOCOL_ERROR. */
    @ParameterizedTest(name = "section 5.1: {0}")
    @MethodSource("framesOnStreamsNeverOpened")
    void section5_1_aFrameOnAStreamTheClientNeverOpenedIsAProtocolConnectionError(String what, int type, int streamId,
                                                                                 byte[] payload) throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream opened = connection.open(dataStream(1), WAIT, () -> true); // HTTP/2 stream 1
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
            wire.send(type, type == Http2.TYPE_HEADERS ? END_HEADERS : 0, streamId, payload);
            assertGoAway(wire, PROTOCOL_ERROR);
            await(() -> !connection.isOpen(), "the connection ended");
            assertThrows(TransportException.class, () -> opened.awaitResponseHead(WAIT));
        }
    }

    /** Section 5.1: PRIORITY may arrive on a stream in any state, an idle one included. */
    @Test
    void section5_1_priorityOnAStreamNeverOpenedIsTaken() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            wire.send(Http2.TYPE_PRIORITY, 0, 9, new byte[] {0, 0, 0, 0, 15});
            assertTrue(probe(connection).ping(WAIT), "the connection is up after the PRIORITY");
            assertTrue(connection.isOpen());
        }
    }

    /**
     * Sections 5.3.1 and 4.3: HEADERS with the PRIORITY flag are decoded past their priority fields; one whose stream
     * depends on itself is a stream error, yet its header block is still decoded, so the entry it adds to the HPACK
     * table is there for the next stream's block (as in Netty's and OkHttp's readers).
     */
    @Test
    void section5_3_1_headersWithPriorityAreDecodedAndASelfDependencyResetsOnlyThatStreamWithHpackInStep()
            throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            wire.sendWindowUpdate(0, 1 << 20);
            BusStream first = connection.open(dataStream(1), WAIT, () -> true);
            BusStream second = connection.open(dataStream(2), WAIT, () -> true);
            BusStream third = connection.open(dataStream(3), WAIT, () -> true);
            // stream 1: priority on stream 0, weight 16; :status 200, then x-a: b with incremental indexing
            wire.send(Http2.TYPE_HEADERS, END_HEADERS | PRIORITY_FLAG, 1, concat(priority(0), hex("88" + "4003782d610162")));
            assertEquals(List.of(Header.of("x-a", "b")), first.awaitResponseHead(WAIT).headers());
            // stream 3 depends on itself: a stream error, after x-c: d went into the table
            wire.send(Http2.TYPE_HEADERS, END_HEADERS | PRIORITY_FLAG, 3, concat(priority(3), hex("88" + "4003782d630164")));
            TransportException reset = assertThrows(TransportException.class, () -> second.awaitResponseHead(WAIT));
            assertInstanceOf(MalformedResponseException.class, reset, reset.getMessage());
            assertEquals(PROTOCOL_ERROR, resetCode(wire, 3));
            // stream 5: indexes 62 (x-c: d) and 63 (x-a: b), as the server's encoder numbers them
            wire.send(Http2.TYPE_HEADERS, END_HEADERS, 5, hex("88bebf"));
            assertEquals(List.of(Header.of("x-c", "d"), Header.of("x-a", "b")),
                    third.awaitResponseHead(WAIT).headers());
            assertTrue(connection.isOpen());
        }
    }

    private static int resetCode(RawH2Peer.Connection wire, int streamId) throws Exception {
        RawH2Peer.Frame f = wire.next(x -> x.type() == RawH2Peer.Frame.RST_STREAM && x.streamId() == streamId, WAIT);
        return ByteBuffer.wrap(f.payload()).getInt();
    }

    /** A HEADERS frame's priority fields: not exclusive, the dependency, weight 16. */
    private static byte[] priority(int dependency) {
        return ByteBuffer.allocate(5).putInt(dependency).put((byte) 15).array();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    private static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex);
    }
}
