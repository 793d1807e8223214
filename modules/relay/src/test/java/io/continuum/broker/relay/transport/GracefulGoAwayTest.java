package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.continuum.broker.testing.await.Poll;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.Http2;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

/**
 * The peer's GOAWAY with NO_ERROR is a graceful close (RFC 9113 section 6.8), not a dropped connection: the streams
 * it processed (at or below its last-stream-id) run on until they end, the ones above it fail as never processed,
 * nothing new opens, and the connection closes once its last stream is gone. A GOAWAY with an error code ends
 * everything at once ({@code ConnectionDeathTest}).
 */
class GracefulGoAwayTest {

    private static ConnectionLostException.Reason reasonOf(Throwable t) {
        return assertInstanceOf(ConnectionLostException.class, t).reason();
    }

    @Test
    void streamsAtOrBelowTheLastStreamIdRunOnAndTheOthersFailAsNotProcessed() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream one = connection.open(dataStream(1), WAIT);
            BusStream three = connection.open(dataStream(2), WAIT);
            BusStream five = connection.open(dataStream(3), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == 5, WAIT);
            wire.sendStatus200(1, false);
            wire.sendStatus200(3, false);
            one.awaitResponseHead(WAIT);
            three.awaitResponseHead(WAIT);
            AtomicInteger goAways = new AtomicInteger();
            connection.onGoAway(goAways::incrementAndGet);
            CompletableFuture<TransportException> closed = new CompletableFuture<>();
            connection.onClose(closed::complete);

            wire.sendGoAway(3, ErrorCode.NO_ERROR.code());

            assertEquals(ConnectionLostException.Reason.GOING_AWAY,
                    reasonOf(assertThrows(TransportException.class, five::read)), "stream 5 was never processed");
            assertEquals(1, goAways.get(), "the listener fired once, on the reader, before stream 5's failure");
            assertTrue(connection.isOpen());
            assertFalse(closed.isDone(), "the connection lives on for streams 1 and 3");
            assertEquals(ConnectionLostException.Reason.GOING_AWAY,
                    reasonOf(assertThrows(TransportException.class, () -> connection.open(dataStream(4), WAIT))),
                    "nothing new opens");
            AtomicInteger late = new AtomicInteger();
            connection.onGoAway(late::incrementAndGet);
            assertEquals(1, late.get(), "a listener registered after the GOAWAY fires at once");

            // both directions still relay on the streams the peer processed
            wire.sendData(1, "to-publisher".getBytes(StandardCharsets.US_ASCII), false);
            ByteBuffer chunk = one.read();
            assertEquals("to-publisher", StandardCharsets.US_ASCII.decode(chunk).toString());
            three.write(ByteBuffer.wrap(new byte[300]));
            wire.next(f -> f.type() == RawH2Peer.Frame.DATA && f.streamId() == 3, WAIT);

            // a second GOAWAY may lower the last-stream-id: stream 3 is then not processed either
            wire.sendGoAway(1, ErrorCode.NO_ERROR.code());
            assertEquals(ConnectionLostException.Reason.GOING_AWAY,
                    reasonOf(assertThrows(TransportException.class, three::read)));
            assertEquals(1, goAways.get(), "one listener call per connection");

            // the last stream ends both ways: our GOAWAY, the last frame, then the close
            one.endRequest();
            wire.next(f -> f.type() == RawH2Peer.Frame.DATA && f.streamId() == 1 && f.endStream(), WAIT);
            assertFalse(closed.isDone());
            wire.sendData(1, new byte[0], true);
            assertEquals(ConnectionLostException.Reason.GOING_AWAY,
                    reasonOf(closed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)));
            RawH2Peer.Frame ours = wire.next(f -> f.type() == RawH2Peer.Frame.GOAWAY, WAIT);
            assertEquals(0, ByteBuffer.wrap(ours.payload(), 4, 4).getInt(), "NO_ERROR");
            assertEquals(List.of(), wire.remainingFramesOnceEnded(WAIT).stream()
                    .map(f -> "type " + f.type() + " stream " + f.streamId()).toList(), "nothing after our GOAWAY");
            assertFalse(connection.isOpen());
        }
    }

    @Test
    void aGoAwayWithNoStreamOpenClosesTheConnectionAtOnce() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            CompletableFuture<TransportException> closed = new CompletableFuture<>();
            connection.onClose(closed::complete);
            wire.sendGoAway(0, ErrorCode.NO_ERROR.code());
            assertEquals(ConnectionLostException.Reason.GOING_AWAY,
                    reasonOf(closed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)));
            wire.next(f -> f.type() == RawH2Peer.Frame.GOAWAY, WAIT);
        }
    }

    @Test
    void anOpenWaitingForASlotIsRefusedByTheGoAway() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of(Http2.SETTINGS_MAX_CONCURRENT_STREAMS, 1L));
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream one = connection.open(dataStream(1), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
            CompletableFuture<Throwable> waiter = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> {
                try {
                    connection.open(dataStream(2), WAIT);
                    waiter.complete(null);
                } catch (Throwable t) {
                    waiter.complete(t);
                }
            });
            ConnectionProbe probe = TransportFixture.probe(connection);
            Poll.await(() -> probe.slotWaiters() == 1, WAIT, "the second open waits for the slot");

            wire.sendGoAway(1, ErrorCode.NO_ERROR.code());

            assertEquals(ConnectionLostException.Reason.GOING_AWAY,
                    reasonOf(waiter.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)));
            assertNull(one.failure(), "stream 1 runs on");
        }
    }
}
