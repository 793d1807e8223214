package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static io.continuum.broker.relay.transport.TransportFixture.probe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

/**
 * This side's GOAWAY: the last frame the connection writes. RFC 9113 section 6.8 lets frames follow a GOAWAY, but
 * a router on Python's {@code h2}, whose state machine a received GOAWAY closes, takes any later frame for a
 * protocol error.
 */
class GoAwayTest {

    /**
     * A stream's writer took its bytes from the windows and is about to hand its DATA to the frame writer when the
     * connection closes; it is let go only once the GOAWAY is on the socket, before the socket closes. Its DATA
     * must not follow the GOAWAY, and its write fails rather than pretending the bytes went out.
     */
    @Test
    void dataOfAStreamStillWritingNeverFollowsOurGoAway() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream stream = connection.open(dataStream(1), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
            ConnectionProbe probe = probe(connection);
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch letGo = new CountDownLatch(1);
            probe.beforeDataAdded(() -> {
                held.countDown();
                try {
                    letGo.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            CompletableFuture<TransportException> outcome = new CompletableFuture<>();
            Thread writer = Thread.ofVirtual().start(() -> {
                try {
                    stream.write(ByteBuffer.wrap(new byte[1000]));
                    outcome.complete(null);
                } catch (TransportException e) {
                    outcome.complete(e);
                }
            });
            assertTrue(held.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the writer holds its window");
            probe.beforeDataAdded(null);
            probe.afterGoAwayWritten(() -> {
                letGo.countDown();
                try {
                    writer.join(WAIT); // its DATA, if any, is flushed before the socket closes
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });

            connection.close();

            wire.next(f -> f.type() == RawH2Peer.Frame.GOAWAY, WAIT);
            List<RawH2Peer.Frame> after = wire.remainingFramesOnceEnded(WAIT);
            assertEquals(List.of(), after.stream().map(f -> "type " + f.type() + " stream " + f.streamId()).toList(),
                    "nothing after our GOAWAY");
            assertEquals(0, wire.dataReceived(1), "no DATA of the stream at all");
            assertInstanceOf(TransportException.class, outcome.get(WAIT.toMillis(), TimeUnit.MILLISECONDS),
                    "the write says its bytes did not go out");
        }
    }
}
