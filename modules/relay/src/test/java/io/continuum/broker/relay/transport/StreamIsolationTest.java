package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.continuum.broker.testing.await.Poll;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

/**
 * Broker to router: a data stream whose window the router withholds never blocks the other streams of the
 * connection (bus-protocol-v1 section 6, R-BUF 1-4), as long as the router's connection-level window leaves
 * room. The raw HTTP/2 peer grants every window itself, so nothing of Helidon's server is involved.
 */
class StreamIsolationTest {
    private static final int INITIAL_WINDOW = 65_535;
    private static final int PER_STREAM = 1024 * 1024;

    @Test
    void aStreamWhoseWindowIsWithheldNeverBlocksTheOthers() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            wire.sendWindowUpdate(0, 64 * 1024 * 1024); // a router that opens its connection window, as §6 asks
            BusStream withheld = connection.open(dataStream(1), WAIT);
            Thread blocked = writer(withheld, PER_STREAM);
            List<BusStream> flowing = new ArrayList<>();
            List<Thread> writers = new ArrayList<>();
            for (int i = 2; i <= 4; i++) {
                BusStream s = connection.open(dataStream(i), WAIT);
                flowing.add(s);
                writers.add(writer(s, PER_STREAM));
            }
            int withheldId = (int) withheld.id();
            Set<Integer> flowingIds = Set.of((int) flowing.get(0).id(), (int) flowing.get(1).id(),
                    (int) flowing.get(2).id());
            // the router reads the flowing streams and returns their window as it goes; stream 1 gets nothing
            while (flowingIds.stream().anyMatch(id -> wire.dataReceived(id) < PER_STREAM)) {
                RawH2Peer.Frame f = wire.next(frame -> frame.type() == RawH2Peer.Frame.DATA, WAIT);
                if (flowingIds.contains(f.streamId()) && f.payload().length > 0) {
                    wire.sendWindowUpdate(f.streamId(), f.payload().length);
                    wire.sendWindowUpdate(0, f.payload().length);
                }
            }
            for (Thread w : writers) {
                assertTrue(w.join(WAIT), "every flowing stream wrote its whole megabyte");
            }
            assertEquals(INITIAL_WINDOW, wire.dataReceived(withheldId), "the withheld stream sent exactly its window");
            assertTrue(blocked.isAlive(), "the withheld stream's writer still waits for its window");
            assertTrue(connection.isOpen());
            // and it resumes once the router grants its window
            wire.sendWindowUpdate(withheldId, PER_STREAM);
            assertTrue(blocked.join(WAIT), "the withheld stream resumes when its window is granted");
            Poll.await(() -> wire.dataReceived(withheldId) == PER_STREAM, WAIT,
                    "all of the withheld stream's bytes arrive");
        }
    }

    @Test
    void aRouterThatKeepsItsConnectionWindowAtTheDefaultLetsOneWithheldStreamHoldEveryOther() throws Exception {
        // The cause of the harness's "slow router" stall with Helidon's server as router (docs/benchmarks-journal.md, "Slow router: diagnosis"):
        // its connection window equals its 65,535-byte stream window and is returned only as a handler reads,
        // so one unread stream takes all of it. Flow control the router chose, not a dependency in the client.
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream withheld = connection.open(dataStream(1), WAIT);
            Thread blocked = writer(withheld, PER_STREAM);
            Poll.await(() -> wire.dataReceived((int) withheld.id()) == INITIAL_WINDOW, WAIT,
                    "the withheld stream used the whole connection window");
            BusStream other = connection.open(dataStream(2), WAIT);
            wire.sendWindowUpdate((int) other.id(), PER_STREAM); // the other stream has window, the connection none
            Thread starved = writer(other, 1024);
            assertTrue(TransportFixture.probe(connection).ping(WAIT), "a round trip: anything sendable was sent");
            assertEquals(0, wire.dataReceived((int) other.id()), "no connection window, no DATA");
            assertFalse(starved.join(java.time.Duration.ZERO));
            wire.sendWindowUpdate(0, 1024);
            assertTrue(starved.join(WAIT), "the connection window frees the other stream at once");
            assertTrue(blocked.isAlive());
        }
    }

    private static Thread writer(BusStream stream, int bytes) {
        return Thread.ofVirtual().start(() -> {
            try {
                stream.write(ByteBuffer.wrap(new byte[bytes]));
            } catch (TransportException e) {
                // the connection closes at the end of the test
            }
        });
    }
}
