package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.continuum.broker.testing.await.Poll;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

/**
 * RFC 9113 section 6.9: flow control counts the DATA that is sent. A stream's writer takes its bytes from the
 * connection's send window before it queues the DATA for the frame writer; when the stream is reset in between,
 * the DATA is never written (no DATA after our RST_STREAM), the peer never sees those bytes and never returns
 * them. The connection's window must get them back, or each such race shrinks it for good until every other
 * stream starves (seen as a stalled healthy stream next to one reset for overflow).
 *
 * <p>White-box: the {@link ConnectionProbe#beforeDataAdded} seam holds the writer right after it took its bytes from
 * the windows, the test resets the stream, then lets the writer go.
 */
class ResetRacingDataWriteTest {
    private static final int WINDOW = 65_535;

    @Test
    void dataSkippedBecauseItsStreamWasResetGivesItsConnectionWindowBack() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT); // the connection window stays at its 65,535 bytes
            ConnectionProbe c = TransportFixture.probe(connection);
            BusStream reset = connection.open(dataStream(1), WAIT);
            CountDownLatch queued = new CountDownLatch(1);
            CountDownLatch resetDone = new CountDownLatch(1);
            c.beforeDataAdded(() -> {
                queued.countDown();
                try {
                    resetDone.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            Thread writer = Thread.ofVirtual().start(() -> {
                try {
                    reset.write(ByteBuffer.wrap(new byte[16 * 1024]));
                } catch (TransportException expected) {
                    // the stream was reset under it
                }
            });
            assertTrue(queued.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the writer queued its DATA");
            c.beforeDataAdded(null);
            reset.cancel();
            resetDone.countDown();
            assertTrue(writer.join(WAIT), "the writer returns");
            wire.next(f -> f.type() == RawH2Peer.Frame.RST_STREAM, WAIT);
            assertEquals(0, wire.dataReceived((int) reset.id()), "no DATA after the reset");

            // the whole connection window is there for another stream
            BusStream other = connection.open(dataStream(2), WAIT);
            Thread full = Thread.ofVirtual().start(() -> {
                try {
                    other.write(ByteBuffer.wrap(new byte[WINDOW]));
                } catch (TransportException e) {
                    // the connection closes at the end of the test
                }
            });
            Poll.await(() -> wire.dataReceived((int) other.id()) == WINDOW, WAIT,
                    "the other stream sent the whole connection window: " + wire.dataReceived((int) other.id()));
            assertTrue(full.join(WAIT));
        }
    }
}
