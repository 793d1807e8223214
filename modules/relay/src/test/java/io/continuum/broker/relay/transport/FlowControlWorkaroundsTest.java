package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static io.continuum.broker.relay.transport.TransportFixture.pattern;
import static io.continuum.broker.relay.transport.TransportFixture.readAllVerified;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.continuum.broker.testing.router.RouterStream;
import io.continuum.broker.testing.router.TestRouter;
import org.junit.jupiter.api.Test;

/**
 * Flow control on a long-lived connection, pinned where Helidon 4.5.0's client (the transport before this one)
 * went wrong: WINDOW_UPDATEs of older streams dropped while newer ones are unread, concurrent writers overshooting
 * the connection window, the connection window left at 64 KiB, and writes blocked on flow control failing after
 * 15 s.
 */
class FlowControlWorkaroundsTest {

    /**
     * Helidon drops stream WINDOW_UPDATEs of older streams while a newer one is open, and with a
     * 64 KiB connection window one unread stream blocks the rest. Here the OLDEST stream is read to the end while
     * newer ones stay unread (each holding a full 64 KiB window), then the newest, then the rest.
     */
    @Test
    void olderStreamsKeepFlowingWhileNewerOnesAreUnread() throws Exception {
        int streams = 4;
        int size = 1024 * 1024;
        try (TestRouter router = TestRouter.builder(TransportFixture.SERVER).start();
             BusConnection connection = TransportFixture.connector().connect(endpoint(router.busUrl()))) {
            List<BusStream> clients = new ArrayList<>();
            List<CompletableFuture<Void>> writers = new ArrayList<>();
            for (int i = 0; i < streams; i++) {
                BusStream stream = connection.open(dataStream(i + 1), WAIT);
                clients.add(stream);
                RouterStream routed = router.nextStream(WAIT);
                int seed = i;
                writers.add(CompletableFuture.runAsync(() -> {
                    for (int off = 0; off < size; off += 16_384) {
                        routed.write(pattern(off, 16_384, seed));
                    }
                    routed.end();
                }, Executors.newVirtualThreadPerTaskExecutor()));
            }
            assertEquals(size, readAllVerified(clients.getFirst(), 0), "oldest stream, newer ones unread");
            assertEquals(size, readAllVerified(clients.getLast(), streams - 1), "newest stream");
            for (int i = 1; i < streams - 1; i++) {
                assertEquals(size, readAllVerified(clients.get(i), i));
            }
            for (CompletableFuture<Void> w : writers) {
                w.get();
            }
            assertTrue(connection.isOpen());
        }
    }

    /**
     * Helidon's concurrent writers overshoot the connection window; here concurrent writers on different streams against a peer whose connection window is 64 KiB.
     * A single overshoot makes the peer send GOAWAY FLOW_CONTROL_ERROR; every run must complete on an open
     * connection. Helidon would also fail a write blocked on flow control after 15 s: writers here wait for the window
     * far longer, and nothing times them out.
     */
    @Test
    void concurrentWritersNeverOvershootASmallConnectionWindow() throws Exception {
        int runs = 5;
        int streams = 8;
        int size = 256 * 1024;
        try (TestRouter router = TestRouter.builder(TransportFixture.SERVER).initialWindowSize(65_535).start();
             ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            BusConnector connector = TransportFixture.connector();
            for (int run = 0; run < runs; run++) {
                try (BusConnection connection = connector.connect(endpoint(router.busUrl()))) {
                    List<Future<Long>> received = new ArrayList<>();
                    List<Future<?>> sent = new ArrayList<>();
                    for (int i = 0; i < streams; i++) {
                        BusStream stream = connection.open(dataStream(i + 1), WAIT);
                        RouterStream routed = router.nextStream(WAIT);
                        int seed = i + run;
                        received.add(threads.submit(() -> {
                            long n = readAllVerified(routed.requestBody(), seed);
                            routed.end();
                            return n;
                        }));
                        sent.add(threads.submit(() -> {
                            for (int off = 0; off < size; off += 65_536) {
                                stream.write(ByteBuffer.wrap(pattern(off, 65_536, seed)));
                            }
                            stream.endRequest();
                            return null;
                        }));
                    }
                    for (Future<?> f : sent) {
                        f.get();
                    }
                    for (Future<Long> f : received) {
                        assertEquals(size, f.get());
                    }
                    assertTrue(connection.isOpen(), "run " + run + ": connection survived");
                }
            }
        }
    }

    /**
     * Spec section 6 / R-BUF 5: a reader that does not release holds exactly the 64 KiB stream window: the peer
     * can send 65,535 bytes and no more; releasing delivers every remaining byte in order.
     */
    @Test
    void pausedReaderHoldsExactlyItsWindowAndResumes() throws Exception {
        int size = 200_000;
        try (TestRouter router = TestRouter.builder(TransportFixture.SERVER).start();
             BusConnection connection = TransportFixture.connector().connect(endpoint(router.busUrl()))) {
            BusStream stream = connection.open(dataStream(1), WAIT);
            RouterStream routed = router.nextStream(WAIT);
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                for (int off = 0; off < size; off += 10_000) {
                    routed.write(pattern(off, 10_000, 3));
                }
                routed.end();
            }, Executors.newVirtualThreadPerTaskExecutor());
            List<ByteBuffer> held = new ArrayList<>();
            long got = 0;
            while (got < TransportSettings.STREAM_RECEIVE_WINDOW) {
                ByteBuffer chunk = stream.read();
                got += chunk.remaining();
                held.add(chunk);
            }
            assertEquals(TransportSettings.STREAM_RECEIVE_WINDOW, got);
            // a PING round trip: anything the router had sent before its ACK has been seen by now
            ConnectionProbe probe = TransportFixture.probe(connection);
            assertTrue(probe.ping(WAIT));
            assertEquals(TransportSettings.STREAM_RECEIVE_WINDOW, probe.connectionBytesUncredited(),
                    "the router cannot send past the unreleased window");
            long position = 0;
            for (ByteBuffer chunk : held) {
                int n = chunk.remaining();
                for (int i = 0; i < n; i++) {
                    assertEquals(TransportFixture.patternByte(position + i, 3), chunk.get());
                }
                position += n;
                stream.release(n);
            }
            ByteBuffer chunk;
            while ((chunk = stream.read()) != null) {
                int n = chunk.remaining();
                for (int i = 0; i < n; i++) {
                    assertEquals(TransportFixture.patternByte(position + i, 3), chunk.get());
                }
                position += n;
                stream.release(n);
            }
            assertEquals(size, position);
            writer.get();
        }
    }
}
