package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.continuum.broker.testing.await.Poll;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.h2.Http2;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

/**
 * What the transport puts on the wire, seen by a bare HTTP/2 peer: authorization is a never-indexed literal, the
 * peer's MAX_CONCURRENT_STREAMS bounds open streams and the wait for a slot is bounded, the connection window is
 * opened, no stream WINDOW_UPDATE goes out before the bytes are released, and writes stay within the windows the
 * peer granted.
 */
class WireLevelTest {

    @Test
    void authorizationIsNeverIndexedOnEveryRequest() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            for (int i = 1; i <= 3; i++) {
                connection.open(dataStream(i), WAIT);
                RawH2Peer.Frame headers = wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
                assertFalse(headers.endStream(), "HEADERS without END_STREAM");
                List<HeaderField> fields = headers.fields();
                HeaderField authorization = fields.stream()
                        .filter(f -> f.name().equals("authorization")).findFirst().orElseThrow();
                assertTrue(authorization.sensitive(), "request " + i + ", never indexed: " + fields);
                assertEquals("Bearer " + TransportFixture.CREDENTIAL, authorization.value());
                String path = "/bus/v1/streams/" + i;
                assertTrue(fields.stream().anyMatch(f -> f.name().equals(":path") && f.value().equals(path)));
            }
        }
    }

    @Test
    void connectionWindowIsOpenedAndNoStreamWindowUpdateGoesOutBeforeRelease()
            throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            RawH2Peer.Frame first = wire.next(f -> f.type() == RawH2Peer.Frame.WINDOW_UPDATE, WAIT);
            assertEquals(0, first.streamId());
            int increment = ByteBuffer.wrap(first.payload()).getInt();
            assertTrue(increment + 65_535L >= TransportSettings.MIN_CONNECTION_RECEIVE_WINDOW,
                    "connection window at least 16 MiB");
            // A peer whose send-window decrement lags its DATA writes (Helidon's server) may apply a replenishing
            // WINDOW_UPDATE first: even a whole window in flight must not take it past 2^31-1 (RFC 9113 6.9.1).
            assertTrue(2L * (increment + 65_535L) <= Integer.MAX_VALUE, "headroom below 2^31-1: " + increment);

            BusStream stream = connection.open(dataStream(1), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
            wire.sendStatus200(1, false);
            // 64 KiB - 1 in four frames: the whole stream window
            byte[] chunk = new byte[16_384];
            for (int i = 0; i < 3; i++) {
                wire.sendData(1, chunk, false);
            }
            wire.sendData(1, new byte[16_383], false);
            long read = 0;
            while (read < 65_535) {
                ByteBuffer b = stream.read();
                read += b.remaining();
            }
            // read but not released: no stream WINDOW_UPDATE may go out (Helidon would have sent one on read)
            assertTrue(TransportFixture.probe(connection).ping(WAIT));
            stream.release(65_535);
            RawH2Peer.Frame update = wire.next(f -> f.type() == RawH2Peer.Frame.WINDOW_UPDATE, WAIT);
            assertEquals(1, update.streamId(), "the first WINDOW_UPDATE after the read is the release's");
            assertEquals(65_535, ByteBuffer.wrap(update.payload()).getInt());
        }
    }

    /**
     * Seen from the peer: the client never sends more than the stream and connection windows the peer granted
     * (counted exactly by a raw peer), across WINDOW_UPDATEs and a SETTINGS_INITIAL_WINDOW_SIZE change.
     */
    @Test
    void writesStayExactlyWithinGrantedWindows() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of(Http2.SETTINGS_INITIAL_WINDOW_SIZE, 1000L));
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            ConnectionProbe h = TransportFixture.probe(connection);
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream stream = connection.open(dataStream(1), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
            int total = 100_000;
            Thread writer = Thread.ofVirtual().start(() -> {
                try {
                    stream.write(ByteBuffer.wrap(new byte[total]));
                } catch (TransportException e) {
                    throw new IllegalStateException(e);
                }
            });
            long streamGranted = 1000;
            long connectionGranted = 65_535;
            boolean settingsChanged = false;
            while (wire.dataReceived(1) < total) {
                long allowed = Math.min(streamGranted, connectionGranted);
                Poll.await(() -> wire.dataReceived(1) >= Math.min(allowed, total), WAIT,
                        "client sends up to the window");
                assertTrue(h.ping(WAIT));
                assertEquals(Math.min(allowed, total), wire.dataReceived(1), "exactly the granted window, no more");
                if (!settingsChanged && allowed >= 20_000) {
                    // raise every stream window by 2,000 through SETTINGS
                    wire.sendSettings(Map.of(Http2.SETTINGS_INITIAL_WINDOW_SIZE, 3000L));
                    streamGranted += 2000;
                    settingsChanged = true;
                } else {
                    wire.sendWindowUpdate(1, 7000);
                    streamGranted += 7000;
                }
                if (connectionGranted - wire.dataReceived(1) < 10_000) {
                    wire.sendWindowUpdate(0, 30_000);
                    connectionGranted += 30_000;
                }
            }
            assertTrue(writer.join(WAIT));
            assertEquals(total, wire.dataReceived(1));
            assertTrue(connection.isOpen());
        }
    }

    @Test
    void slotsFollowThePeersMaxConcurrentStreamsAndTheWaitIsBounded() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of(Http2.SETTINGS_MAX_CONCURRENT_STREAMS, 2L));
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            ConnectionProbe h = TransportFixture.probe(connection);
            assertEquals(2, h.peerMaxConcurrentStreams());
            BusStream first = connection.open(dataStream(1), WAIT);
            BusStream second = connection.open(dataStream(2), WAIT);
            long start = System.nanoTime();
            assertThrows(SlotTimeoutException.class, () -> connection.open(dataStream(3), Duration.ofMillis(300)));
            assertTrue(System.nanoTime() - start >= Duration.ofMillis(300).toNanos(), "waited the slot timeout");
            // a cancelled stream frees its slot
            first.cancel();
            BusStream third = connection.open(dataStream(3), WAIT);
            assertNotNull(third);
            // END_STREAM both ways frees a slot too
            second.endRequest();
            wire.sendStatus200(3, true); // stream id 3 is the second stream
            assertEquals(200, second.awaitResponseHead(WAIT).status());
            Poll.await(() -> h.streamsInUse() == 1, WAIT, "slot of the finished stream released");
            assertNotNull(connection.open(dataStream(4), WAIT));
            // a peer reset frees one
            wire.sendReset(5, ErrorCode.CANCEL.code());
            Poll.await(() -> h.streamsInUse() == 1, WAIT, "slot of the reset stream released");
            // and a connection death wakes a waiter at once
            assertNotNull(connection.open(dataStream(5), WAIT));
            Thread waiter = Thread.ofVirtual().start(() -> assertThrows(ConnectionLostException.class,
                    () -> connection.open(dataStream(6), Duration.ofMinutes(5))));
            Poll.await(() -> waiter.getState() == Thread.State.WAITING
                    || waiter.getState() == Thread.State.TIMED_WAITING, WAIT, "waiter parked");
            wire.close();
            assertTrue(waiter.join(WAIT), "slot waiter woken by connection loss");
        }
    }

    @Test
    void theResponseHeadDeadlineCountsFromTheSlotGrantNotFromTheCallToOpen() throws Exception {
        // R-OPEN: the 10 s for the router's response head include any wait inside the client after the
        // slot was granted, and exclude the (separately bounded) wait for the slot itself.
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of(Http2.SETTINGS_MAX_CONCURRENT_STREAMS, 1L));
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            peer.accept(WAIT);
            long beforeFirst = System.nanoTime();
            BusStream first = connection.open(dataStream(1), WAIT);
            long afterFirst = System.nanoTime();
            assertTrue(first.slotGrantedNanos() - beforeFirst >= 0 && afterFirst - first.slotGrantedNanos() >= 0,
                    "an immediate grant lies inside the call to open()");

            long calledAt = System.nanoTime();
            TransportFixture.WaitingOpen second = TransportFixture.openWaitingForSlot(connection, 2,
                    "second open waits for the slot");
            long freedAt = System.nanoTime();
            first.cancel();
            long granted = second.get().slotGrantedNanos();
            assertTrue(granted - freedAt >= 0, "the grant comes after the slot was freed, not when open() was called");
            assertTrue(granted - calledAt > 0);
            assertTrue(second.thread().join(WAIT), "second stream opened once the slot was freed");
        }
    }
}
