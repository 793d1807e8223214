package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.continuum.broker.h2.Http2;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The peer counts a stream against its MAX_CONCURRENT_STREAMS until it reads the stream's RST_STREAM: a slot the
 * transport frees must stay taken until that frame is on the wire, so the HEADERS of a stream opened in it always
 * follow the reset (else the peer sees one stream too many and may drop the connection). And a commit check that
 * answers false once the slot is granted puts nothing on the wire and gives the slot back.
 */
class SlotReleaseOrderTest {
    private RawH2Peer peer;
    private BusConnection connection;
    private ConnectionProbe h;
    private RawH2Peer.Connection wire;
    private BusStream first;

    /** A peer that allows one concurrent stream, and stream 1 open in that slot, its HEADERS read by the peer. */
    private void openTheOnlySlot() throws Exception {
        peer = RawH2Peer.start(TransportFixture.SERVER, Map.of(Http2.SETTINGS_MAX_CONCURRENT_STREAMS, 1L));
        connection = TransportFixture.connector().connect(endpoint(peer.busUrl()));
        h = TransportFixture.probe(connection);
        wire = peer.accept(WAIT);
        first = connection.open(dataStream(1), WAIT);
        wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == 1, WAIT);
    }

    @AfterEach
    void close() {
        if (connection != null) {
            connection.close();
        }
        if (peer != null) {
            peer.close();
        }
    }

    @Test
    void aCancelledStreamsSlotIsHeldUntilItsResetIsWrittenAndTheNextHeadersFollowTheReset() throws Exception {
        openTheOnlySlot();
        AtomicLong inUseAtReset = new AtomicLong(-1);
        h.afterResetWritten(first, () -> inUseAtReset.set(h.streamsInUse()));
        first.cancel();
        assertEquals(1, inUseAtReset.get(), "the slot is still taken when the RST_STREAM reaches the wire");
        assertEquals(0, h.streamsInUse(), "and free right after");

        // with a waiter: the peer reads the reset before the next stream's HEADERS, every time
        BusStream second = connection.open(dataStream(2), WAIT);
        wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == 3, WAIT);
        TransportFixture.WaitingOpen third = TransportFixture.openWaitingForSlot(connection, 3,
                "third open waits for the slot");
        second.cancel();
        RawH2Peer.Frame next = wire.next(f -> f.type() == RawH2Peer.Frame.RST_STREAM
                || f.type() == RawH2Peer.Frame.HEADERS, WAIT);
        assertEquals(RawH2Peer.Frame.RST_STREAM, next.type(), "the reset that frees the slot comes first");
        assertEquals(3, next.streamId());
        wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == 5, WAIT);
        assertEquals(5, third.get().id());
        assertTrue(connection.isOpen());
    }

    @Test
    void aStreamAbandonedWhileItWaitedForItsSlotNeverReachesTheWire() throws Exception {
        openTheOnlySlot();
        first.cancel();
        assertNull(connection.open(dataStream(2), WAIT, () -> false), "abandoned once the slot was granted");
        assertEquals(0, h.streamsInUse(), "its slot went back");
        BusStream next = connection.open(dataStream(3), WAIT);
        RawH2Peer.Frame headers = wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
        assertEquals(3, headers.streamId(), "the abandoned stream wrote no HEADERS (and took no stream id)");
        assertEquals(3, next.id());
    }
}
