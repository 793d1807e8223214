package io.continuum.broker.relay;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.random.RandomGenerator;

import io.continuum.broker.event.EventFields;
import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.api.Cidr;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.Http2;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.RelayConfig;

/**
 * Sections 5 and 6 as a router sees them, played by a raw HTTP/2 router: a stream's answer frames leave only
 * after the stream has left the broker's table and released its HTTP/2 slot; one answer, then at most one close,
 * never a close before its open and never HEADERS after a refusal; and frames the router sends on a stream the
 * broker has reset are ignored without touching the connection. Where the outcome hinges on what the broker's
 * threads do right after writing a frame, the session stream is tapped ({@link SessionTapConnector}) and the
 * writing thread held there until the router's next move has been decided.
 */
@ExtendWith(LeakCheck.class)
class StreamAnswerOrderTest {
    /** A new field: the codec writes it first as a literal with incremental indexing (dynamic index 62). */
    private static final HeaderField LATE_FIELD = new HeaderField("x-late", "yes");
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final CountingMetrics metrics = new CountingMetrics();
    private final MutableView view = new MutableView().synced(true);
    private final SessionTapConnector tap = new SessionTapConnector();

    private EventBroker broker;

    @AfterEach
    void closeAll() throws Exception {
        if (broker != null) {
            broker.close(); // first: nothing reconnects while the peers go away
        }
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    /**
     * Section 6, revocation: the broker resets stream 3 while the router is still sending on it. DATA, a header
     * block that adds to the HPACK dynamic table, WINDOW_UPDATE and RST_STREAM arrive on the reset stream; the
     * connection, the other stream, and a later stream whose head uses the table entry all carry on.
     */
    @Test
    void framesTheRouterSendsOnARevokedStreamAreIgnoredAndTheOtherStreamsGoOn() throws Exception {
        RawH2Peer peer = peer(Map.of());
        LoopbackListener a = publisher();
        LoopbackListener b = publisher();
        startBroker(peer);
        RawBusRouter router = router(peer, 8);
        subscribeOpened(router, 9, a);
        subscribeOpened(router, 11, b);
        Socket upA = a.awaitConnection();
        Socket upB = b.awaitConnection();
        RawH2Peer.Connection wire = router.wire();
        wire.sendStatus200(3, false);
        wire.sendStatus200(5, false);

        view.withdraw(NAMESPACE, "127.0.0.1", a.port());
        // the router keeps sending on stream 3 before and after it learns of the reset
        lateFrames(wire, 3, false);
        Frame.StreamClosed closed = router.await(Frame.StreamClosed.class, f -> f.streamId() == 9, WAIT);
        assertEquals(Code.TARGET_NOT_ADVERTISED, closed.code());
        lateFrames(wire, 3, true);
        await(() -> router.stream(3).reset(), "RST_STREAM on the revoked stream");
        // DATA the router sent before the broker saw the withdrawal may still reach the publisher (the first
        // lateFrames races the revocation); nothing sent after stream_closed does, and then the socket closes.
        byte[] beforeClose = upA.getInputStream().readAllBytes();
        assertTrue(beforeClose.length <= 3 * 16_384 && allZero(beforeClose),
                "only the router's DATA from before the revocation, then the revoked publisher's socket is closed: "
                        + beforeClose.length + " bytes");

        // the other stream relays both ways
        wire.sendData(5, "to-b".getBytes(StandardCharsets.US_ASCII), false);
        assertEquals("to-b", readExactly(upB.getInputStream(), 4));
        upB.getOutputStream().write("from-b".getBytes(StandardCharsets.US_ASCII));
        await(() -> router.stream(5).bytes().length == 6, "publisher bytes on the other stream");

        // a new stream's head refers to the entry the ignored header block added (HPACK index 62)
        subscribeOpened(router, 13, b);
        Socket upB2 = b.awaitConnection();
        wire.sendHeaders(7, false, new HeaderField(":status", "200"), LATE_FIELD); // LATE_FIELD goes as an index
        wire.sendData(7, "x".getBytes(StandardCharsets.US_ASCII), false);
        assertEquals("x", readExactly(upB2.getInputStream(), 1));

        assertTrue(metrics.connected());
        assertEquals(1, tap.tracking().connectionsOpened(), "one connection throughout");
        assertEquals(0, metrics.get("session_ends_total{reason=connection_lost}"));
        assertEquals(0, metrics.get("session_ends_total{reason=protocol_error}"));
    }

    /**
     * Section 6, publisher EOF, against a router that never ends its response: END_STREAM, then
     * {@code stream_closed upstream_closed} at once (the stream has left the table: a subscribe at
     * {@code max_streams} right after it opens), then, once the grace has passed, the reset that frees the HTTP/2
     * slot (the router allows one data stream), and only then the next stream's HEADERS.
     */
    @Test
    void publisherEofIsReportedAtOnceAndTheSlotFreesAfterTheGrace() throws Exception {
        RawH2Peer peer = peer(Map.of(Http2.SETTINGS_MAX_CONCURRENT_STREAMS, 2L));
        LoopbackListener a = publisher();
        startBroker(peer);
        RawBusRouter router = router(peer, 1);
        subscribeOpened(router, 9, a);
        Socket up = a.awaitConnection();
        router.wire().sendStatus200(3, false); // and the router never ends this response
        up.getOutputStream().write(new byte[] {1, 2, 3});
        up.close();

        Frame.StreamClosed closed = router.await(Frame.StreamClosed.class, f -> f.streamId() == 9, WAIT);
        assertEquals(Code.UPSTREAM_CLOSED, closed.code());
        assertTrue(broker.status().openStreams().isEmpty(), "out of open_streams when the close was sent");
        assertEquals(1, metrics.get("stream_closes_total{code=upstream_closed}"));
        router.subscribe(11, NAMESPACE, "127.0.0.1", a.port());
        Frame answer = router.await(Frame.class, f -> answerFor(f, 11), WAIT);
        assertInstanceOf(Frame.StreamOpened.class, answer, "the stream left max_streams with its close: " + answer);

        assertEquals(3, router.stream(3).bytes().length, "the request body was complete");
        assertEquals(List.of("HEADERS 3", "stream_opened 9", "END_STREAM 3", "stream_closed 9", "RST_STREAM 3",
                        "HEADERS 5", "stream_opened 11"), router.wireEvents(),
                "END_STREAM, stream_closed without waiting for the router, the releasing reset, the next stream");
    }

    /** Section 6: a router that ends its response once it read END_STREAM frees the stream; no reset follows. */
    @Test
    void aRouterThatEndsItsResponseAfterEndStreamGetsNoReset() throws Exception {
        RawH2Peer peer = peer(Map.of(Http2.SETTINGS_MAX_CONCURRENT_STREAMS, 2L));
        LoopbackListener a = publisher();
        startBroker(peer);
        RawBusRouter router = router(peer, 1);
        subscribeOpened(router, 9, a);
        Socket up = a.awaitConnection();
        router.wire().sendStatus200(3, false);
        up.close();
        router.await(Frame.StreamClosed.class, f -> f.streamId() == 9, WAIT);
        await(() -> router.stream(3).requestEnded(), "END_STREAM on the data stream");
        router.wire().sendData(3, new byte[0], true);
        router.subscribe(11, NAMESPACE, "127.0.0.1", a.port());
        router.await(Frame.StreamOpened.class, f -> f.streamId() == 11, WAIT);
        assertEquals(List.of("HEADERS 3", "stream_opened 9", "END_STREAM 3", "stream_closed 9", "HEADERS 5",
                "stream_opened 11"), router.wireEvents(), "both sides ended stream 3: nothing to reset");
    }

    /**
     * Section 6, publisher EOF, against a router that does not read the stream (its window stays shut): the flush of
     * what is queued stops once nothing could be written for a while, and the router still gets the reset and
     * {@code stream_closed upstream_closed}, in that order.
     */
    @Test
    void aFlushTheRouterNeverReadsEndsTheStreamUpstreamClosedAnyway() throws Exception {
        RawH2Peer peer = peer(Map.of());
        LoopbackListener a = publisher();
        startBroker(peer);
        RawBusRouter router = router(peer, 8, RawBusRouter.Windows.OPEN_SESSION_ONLY);
        subscribeOpened(router, 9, a);
        Socket up = a.awaitConnection();
        router.wire().sendStatus200(3, false);
        up.getOutputStream().write(new byte[200_000]); // the stream window takes 65,535 of it
        up.close();

        Frame.StreamClosed closed = router.await(Frame.StreamClosed.class, f -> f.streamId() == 9, WAIT);
        assertEquals(Code.UPSTREAM_CLOSED, closed.code());
        assertEquals(List.of("HEADERS 3", "stream_opened 9", "RST_STREAM 3", "stream_closed 9"), router.wireEvents(),
                "the abandoned flush resets the stream, then reports the publisher's end");
        assertEquals(65_535, router.stream(3).bytes().length, "what the window allowed, in order");
    }

    /**
     * Section 4 item 5 with section 6: a publisher that closes while the session drains ends its stream at once, and
     * the drain ends as soon as the last stream is gone: the session's END_STREAM follows {@code stream_closed}, not
     * the data stream's reset grace nor the drain's minute-long deadline.
     */
    @Test
    void aPublisherEndDuringADrainEndsTheDrainWithItsLastStream() throws Exception {
        RawH2Peer peer = peer(Map.of());
        LoopbackListener a = publisher();
        startBroker(peer);
        RawBusRouter router = router(peer, 8);
        subscribeOpened(router, 9, a);
        Socket up = a.awaitConnection();
        router.wire().sendStatus200(3, false); // never ended
        router.send(new Frame.Drain("maintenance", OptionalLong.of(60_000)));
        await(() -> broker.status().state() == io.continuum.broker.relay.api.SessionState.DRAINING,
                "the broker draining");
        up.close();

        assertTrue(router.awaitSessionRequestEnd(WAIT), "the drain ended with its last stream");
        List<String> events = router.wireEvents();
        assertEquals(List.of("HEADERS 3", "stream_opened 9", "END_STREAM 3", "stream_closed 9", "END_STREAM 1"),
                events.subList(0, Math.min(events.size(), 5)), "no wait on the router's end of stream 3: " + events);
    }

    /** Section 5: on reading {@code stream_refused} the router may reuse the id at once. */
    @Test
    void anIdIsFreeForReuseWhenItsRefusalArrives() throws Exception {
        RawH2Peer peer = peer(Map.of());
        LoopbackListener unadvertised = LoopbackListener.open("unadvertised", 50);
        closeables.add(unadvertised);
        startBroker(peer);
        RawBusRouter router = router(peer, 8);
        // hold the broker right after the refusal is written until the router's reuse of the id is decided
        tap.holdAfter(f -> f instanceof Frame.StreamRefused r && r.streamId() == 9,
                () -> metrics.get("subscribes_total{result=refused}") >= 2);
        router.subscribe(9, NAMESPACE, "127.0.0.1", unadvertised.port());
        Frame.StreamRefused first = router.await(Frame.StreamRefused.class, f -> f.streamId() == 9, WAIT);
        assertEquals(Code.TARGET_NOT_ADVERTISED, first.code());
        router.subscribe(9, NAMESPACE, "127.0.0.1", unadvertised.port());
        Frame.StreamRefused second = router.await(Frame.StreamRefused.class, f -> f.streamId() == 9, WAIT);
        assertEquals(Code.TARGET_NOT_ADVERTISED, second.code(), "the id was free again: " + second);
    }

    /**
     * Section 5: on reading {@code stream_closed} the router may reuse the id, or, at {@code max_streams}, open
     * another stream, at once.
     */
    @ParameterizedTest(name = "reuse the id: {0}")
    @ValueSource(booleans = {true, false})
    void aClosedStreamIsOutOfTheTableWhenItsCloseArrives(boolean reuseId) throws Exception {
        RawH2Peer peer = peer(Map.of());
        LoopbackListener a = publisher();
        LoopbackListener b = publisher();
        startBroker(peer);
        RawBusRouter router = router(peer, 1);
        subscribeOpened(router, 9, a);
        tap.holdAfter(f -> f instanceof Frame.StreamClosed c && c.streamId() == 9,
                () -> metrics.get("subscribes_total{result=opened}") >= 2
                        || metrics.get("subscribes_total{result=refused}") >= 1);
        view.withdraw(NAMESPACE, "127.0.0.1", a.port());
        router.await(Frame.StreamClosed.class, f -> f.streamId() == 9, WAIT);
        long next = reuseId ? 9 : 11;
        router.subscribe(next, NAMESPACE, "127.0.0.1", b.port());
        Frame answer = router.await(Frame.class, f -> answerFor(f, next), WAIT);
        assertInstanceOf(Frame.StreamOpened.class, answer, "the closed stream had left the table: " + answer);
    }

    /**
     * Section 6, revocation of a stream still opening: a subscribe revoked while it waits for an HTTP/2 stream slot
     * is refused {@code target_not_advertised} and never writes its HEADERS when a slot frees, so the stream the
     * router opens next takes that slot and the next stream id.
     */
    @Test
    void aSubscribeRevokedWhileWaitingForASlotNeverOpensItsDataStream() throws Exception {
        RawH2Peer peer = peer(Map.of(Http2.SETTINGS_MAX_CONCURRENT_STREAMS, 2L));
        LoopbackListener a = publisher();
        LoopbackListener b = publisher();
        startBroker(peer);
        RawBusRouter router = router(peer, 2);
        subscribeOpened(router, 9, a);
        router.subscribe(11, NAMESPACE, "127.0.0.1", b.port());
        await(() -> tap.tracking().slotWaiters() == 1, "stream 11 waits for an HTTP/2 slot");

        view.withdraw(NAMESPACE, "127.0.0.1", b.port());
        Frame.StreamRefused refused = router.await(Frame.StreamRefused.class, f -> f.streamId() == 11, WAIT);
        assertEquals(Code.TARGET_NOT_ADVERTISED, refused.code());
        router.send(new Frame.Unsubscribe(9)); // frees the slot stream 11 was waiting for
        await(() -> router.stream(3).reset(), "stream 9 reset");
        subscribeOpened(router, 13, a);

        assertEquals(List.of("HEADERS 3", "RST_STREAM 3", "HEADERS 5"), router.dataStreamEvents(),
                "no HEADERS for the refused stream 11");
        assertEquals(List.of(refused), tap.written().stream().filter(f -> answerFor(f, 11)
                || f instanceof Frame.StreamClosed c && c.streamId() == 11).toList(), "one answer for 11");
    }

    /**
     * Section 5: a stream revoked after its HEADERS are out but before {@code stream_opened} is sent is closed
     * behind its {@code stream_opened}: a router never reads a close for an id it has not seen opened.
     */
    @Test
    void aRevocationRacingTheOpenIsReportedAfterTheOpen() throws Exception {
        RawH2Peer peer = peer(Map.of());
        LoopbackListener a = publisher();
        startBroker(peer);
        RawBusRouter router = router(peer, 8);
        AtomicBoolean revoked = new AtomicBoolean();
        Handler revocationSeen = new Handler() {
            @Override
            public void publish(LogRecord record) {
                // an event's record carries its name as the message and its typed fields as the one parameter
                if ("stream_revoked".equals(record.getMessage()) && record.getParameters() != null
                        && record.getParameters()[0] instanceof EventFields fields
                        && Long.valueOf(9).equals(fields.get("stream_id"))) {
                    revoked.set(true);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger sessionLog = Logger.getLogger("io.continuum.broker.relay.session.BusSession");
        sessionLog.addHandler(revocationSeen);
        closeables.add(() -> sessionLog.removeHandler(revocationSeen));
        AtomicBoolean once = new AtomicBoolean();
        // on the opener's thread: the open is decided, stream_opened not yet sent; revoke now and let the
        // revocation run to its end (or write its close) before stream_opened goes
        metrics.onSubscribeOpened(() -> {
            if (once.compareAndSet(false, true)) {
                view.withdraw(NAMESPACE, "127.0.0.1", a.port());
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (!revoked.get() && tap.written().stream().noneMatch(f -> f instanceof Frame.StreamClosed)
                        && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                    java.util.concurrent.locks.LockSupport.parkNanos(5_000_000L);
                }
            }
        });
        router.subscribe(9, NAMESPACE, "127.0.0.1", a.port());
        Frame first = router.await(Frame.class, f -> answerFor(f, 9) || f instanceof Frame.StreamClosed, WAIT);
        assertInstanceOf(Frame.StreamOpened.class, first, "the open comes first");
        Frame.StreamClosed closed = router.await(Frame.StreamClosed.class, f -> f.streamId() == 9, WAIT);
        assertEquals(Code.TARGET_NOT_ADVERTISED, closed.code());
        await(() -> router.stream(3).reset(), "the data stream is reset");
    }

    // ----------------------------------------------------------------------------------------------------------

    /** Subscribes bus stream {@code id} to {@code publisher} and waits for its {@code stream_opened}. */
    private static void subscribeOpened(RawBusRouter router, long id, LoopbackListener publisher) throws Exception {
        router.subscribe(id, NAMESPACE, "127.0.0.1", publisher.port());
        router.await(Frame.StreamOpened.class, f -> f.streamId() == id, WAIT);
    }

    private static boolean answerFor(Frame f, long streamId) {
        return f instanceof Frame.StreamOpened o && o.streamId() == streamId
                || f instanceof Frame.StreamRefused r && r.streamId() == streamId;
    }

    /**
     * DATA within the stream window, WINDOW_UPDATE, then trailers with END_STREAM whose header block adds
     * {@code x-late: yes} to the HPACK dynamic table; and the router's own RST_STREAM.
     */
    private static void lateFrames(RawH2Peer.Connection wire, int stream, boolean andReset) throws IOException {
        // DATA sent after the router saw the stream closed is marked (0x5A), so a test can tell it from the zeros
        // sent before, which may legitimately still reach the publisher.
        byte[] data = new byte[16_384];
        java.util.Arrays.fill(data, andReset ? (byte) 0x5A : 0);
        for (int i = 0; i < 3; i++) {
            wire.sendData(stream, data, false);
        }
        wire.sendWindowUpdate(stream, 10_000);
        wire.sendHeaders(stream, true, LATE_FIELD); // a literal with incremental indexing: a dynamic table entry
        if (andReset) {
            wire.sendReset(stream, ErrorCode.CANCEL.code());
        }
    }

    private static boolean allZero(byte[] bytes) {
        for (byte b : bytes) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    private static String readExactly(InputStream in, int n) throws IOException {
        return new String(in.readNBytes(n), StandardCharsets.US_ASCII);
    }

    private RawH2Peer peer(Map<Integer, Long> settings) throws IOException {
        RawH2Peer peer = RawH2Peer.start(BrokerHarness.SERVER, settings);
        closeables.add(peer);
        return peer;
    }

    private LoopbackListener publisher() {
        LoopbackListener s = LoopbackListener.open("publisher", 50);
        closeables.add(s);
        view.advertise(NAMESPACE, "127.0.0.1", s.port());
        return s;
    }

    private void startBroker(RawH2Peer peer) {
        RelayConfig config = RelayConfig.builder().busUrl(peer.busUrl()).caCertificates(() -> List.of(BrokerHarness.PKI.caCertificate()))
                .credential(() -> Credential.of(BrokerHarness.CREDENTIAL)).clientId("broker-a").kubernetesNamespace("k")
                .dynamoNamespaces(List.of(NAMESPACE)).allowedCidrs(List.of(Cidr.parse("127.0.0.0/8")))
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(100)).build();
        broker = EventBroker.create(config, view, metrics, tap, RandomGenerator.getDefault());
        LeakCheck.expect("broker HTTP/2 stream slots in use", tap.tracking()::streamsInUse, 0);
        LeakCheck.expect("broker bus connections open", tap.tracking()::openConnections, 0);
        broker.start();
    }

    private RawBusRouter router(RawH2Peer peer, long maxStreams) throws Exception {
        return router(peer, maxStreams, RawBusRouter.Windows.GRANT_AS_READ);
    }

    private RawBusRouter router(RawH2Peer peer, long maxStreams, RawBusRouter.Windows windows) throws Exception {
        RawBusRouter router = RawBusRouter.acceptSession(peer, WAIT, new Frame.Welcome(1, "raw-session",
                OptionalLong.empty(), OptionalLong.empty(), OptionalLong.of(maxStreams), OptionalLong.empty(),
                OptionalLong.empty()), windows);
        closeables.add(router);
        return router;
    }
}
