package io.continuum.broker.relay.transport;

import java.util.Map;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.Http2;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.assertGoAway;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static io.continuum.broker.relay.transport.TransportFixture.probe;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 55 item 3, RFC 9113 section 10.5: frames that change nothing are bounded, past the bound GOAWAY
 * ENHANCE_YOUR_CALM (the session then reconnects with the backoff, as after any lost connection). Bounds
 * (docs/protocol.md): 2 consecutive empty DATA frames without END_STREAM (Netty's default), 2 empty CONTINUATION
 * frames per header block, 2,048 PRIORITY and 2,048 RST_STREAM per 30 s. WINDOW_UPDATEs that carry credit are never
 * bounded: routers send one per DATA frame.
 */
class FramesThatChangeNothingTest {
    private static final int ENHANCE_YOUR_CALM = ErrorCode.ENHANCE_YOUR_CALM.code();
    private static final int STREAM = 1;

    @Test
    void twoConsecutiveEmptyDataFramesAreTakenTheThirdIsEnhanceYourCalm() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            TransportFixture.openAnswered(connection, wire, 1);
            for (int round = 0; round < 3; round++) { // two empty, then a byte: the count starts again
                wire.sendData(STREAM, new byte[0], false);
                wire.sendData(STREAM, new byte[0], false);
                wire.sendData(STREAM, new byte[] {1}, false);
            }
            assertTrue(probe(connection).ping(WAIT), "six empty frames, never three in a row");
            wire.sendTogether(w -> {
                for (int i = 0; i < 3; i++) {
                    w.data(STREAM, false, new byte[0], 0, 0);
                }
            });
            assertGoAway(wire, ENHANCE_YOUR_CALM);
            await(() -> !connection.isOpen(), "the connection ended");
        }
    }

    /**
     * RFC 9113 section 5.1: frames a router sent before it saw the broker's RST_STREAM are ignored, empty DATA among
     * them, and not counted (as the conformance harness's unsubscribe race sends them: DATA(0) x3, WINDOW_UPDATE,
     * RST_STREAM right after the broker's reset).
     */
    @Test
    void emptyDataFramesOnAStreamTheBrokerResetAreIgnoredNotCounted() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream stream = TransportFixture.openAnswered(connection, wire, 1);
            stream.cancel();
            wire.next(f -> f.type() == RawH2Peer.Frame.RST_STREAM && f.streamId() == STREAM, WAIT);
            wire.sendTogether(w -> {
                for (int i = 0; i < 5; i++) {
                    w.data(STREAM, false, new byte[0], 0, 0);
                }
                w.windowUpdate(STREAM, 1_024);
                w.rstStream(STREAM, ErrorCode.CANCEL.code());
            });
            assertTrue(probe(connection).ping(WAIT));
            assertTrue(connection.isOpen(), "late frames on a reset stream change nothing, and end nothing");
        }
    }

    @Test
    void threeEmptyContinuationFramesInOneHeaderBlockAreEnhanceYourCalm() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            connection.open(dataStream(1), WAIT, () -> true);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
            wire.sendTogether(w -> {
                w.frame(Http2.TYPE_HEADERS, 0, STREAM, new byte[] {(byte) 0x88}); // HEADERS without END_HEADERS
                for (int i = 0; i < 3; i++) {
                    w.frame(Http2.TYPE_CONTINUATION, 0, STREAM, new byte[0]);
                }
            });
            assertGoAway(wire, ENHANCE_YOUR_CALM);
        }
    }

    @Test
    void priorityFramesPastTheirLimitAreEnhanceYourCalm() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            wire.sendTogether(w -> {
                for (int i = 0; i < Http2BusConnection.MAX_PRIORITIES_PER_WINDOW; i++) {
                    w.frame(Http2.TYPE_PRIORITY, 0, 1 + 2 * (i % 100), new byte[] {0, 0, 0, 0, 15});
                }
            });
            assertTrue(probe(connection).ping(WAIT), "the limit itself is taken");
            wire.send(Http2.TYPE_PRIORITY, 0, 3, new byte[] {0, 0, 0, 0, 15});
            assertGoAway(wire, ENHANCE_YOUR_CALM);
        }
    }

    @Test
    void resetsPastTheirLimitAreEnhanceYourCalm() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            TransportFixture.openAnswered(connection, wire, 1);
            wire.sendTogether(w -> {
                for (int i = 0; i < Http2BusConnection.MAX_RESETS_PER_WINDOW; i++) {
                    w.rstStream(STREAM, ErrorCode.CANCEL.code()); // the first ends the stream, the rest change nothing
                }
            });
            assertTrue(probe(connection).ping(WAIT), "the limit itself is taken");
            wire.sendReset(STREAM, ErrorCode.CANCEL.code());
            assertGoAway(wire, ENHANCE_YOUR_CALM);
        }
    }

    @Test
    void windowUpdatesThatCarryCreditAreNeverBounded() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            TransportFixture.openAnswered(connection, wire, 1);
            wire.sendTogether(w -> {
                for (int i = 0; i < 50_000; i++) {
                    w.windowUpdate(i % 2 == 0 ? 0 : STREAM, 1);
                }
            });
            assertTrue(probe(connection).ping(WAIT));
            assertTrue(connection.isOpen());
        }
    }
}
