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
 * Flow control on a long-lived connection (RFC 9113 section 5.2, R-BUF 5): every stream's WINDOW_UPDATEs reach it
 * whatever the other streams do, concurrent writers share the connection window without overshooting it, a write
 * waits for window as long as it takes, and an unread stream holds exactly its window.
 */
class FlowControlTest {

    /**
     * A stream's WINDOW_UPDATEs reach it while newer streams are open and unread, and unread streams do not block
     * the others: the OLDEST stream is read to the end while newer ones stay unread (each holding a full 64 KiB
     * window), then the newest, then the rest.
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
     * Concurrent writers on different streams against a peer whose connection window is 64 KiB never send more
     * than it granted: a single overshoot makes the peer send GOAWAY FLOW_CONTROL_ERROR, and every run completes on
     * an open connection. A write blocked on flow control waits for the window as long as it takes: nothing times it
     * out.
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
