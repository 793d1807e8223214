package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static io.continuum.broker.relay.transport.TransportFixture.pattern;
import static io.continuum.broker.relay.transport.TransportFixture.readAllVerified;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.continuum.broker.testing.await.Poll;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import io.continuum.broker.testing.router.RouterStream;
import io.continuum.broker.testing.router.TestRouter;
import org.junit.jupiter.api.Test;

/** 1,000 concurrent streams under a limit of 100 on one connection; one stream's throughput (printed only). */
class ScaleAndThroughputTest {

    /** Echo: the router sends back what it reads, then ends. */
    private static void echo(RouterStream stream) throws Exception {
        stream.sendHead(200);
        byte[] buffer = new byte[16_384];
        try (InputStream in = stream.requestBody()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                if (n > 0) {
                    stream.write(java.util.Arrays.copyOf(buffer, n));
                }
            }
        }
        stream.end();
    }

    @Test
    void thousandStreamsUnderASlotLimitOfHundredAllComplete() throws Exception {
        int streams = 1000;
        int size = 4096;
        Duration slotTimeout = Duration.ofSeconds(60);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
             // Helidon's server counts a finished stream until its handler thread has cleaned up, and answers
             // an overshoot by closing the connection. On a loaded machine the clean-up lags by more than any
             // small margin (a CI run lost the connection with 110 advertised), so the router advertises more
             // than the test ever opens and the cap under test is only the client's own 100.
             // Its window stays below four frames: with a larger one Helidon 4.5.0 batches WINDOW_UPDATEs in
             // an unsynchronized counter that handlers reading at once can race into sending an increment of
             // 0 (a CI run lost the connection so, rightly: RFC 9113 section 6.9); below it sends each update
             // as it consumes.
             TestRouter router = TestRouter.builder(TransportFixture.SERVER).maxConcurrentStreams(2 * streams)
                     .initialWindowSize(TestRouter.UNBATCHED_WINDOW)
                     .streamHandler(ScaleAndThroughputTest::echo).start();
             BusConnection connection = TransportFixture.connector(TransportSettings.defaults().withLocalStreamLimit(100))
                     .connect(endpoint(router.busUrl()))) {
            ConnectionProbe h = TransportFixture.probe(connection);
            assertEquals(2 * streams, h.peerMaxConcurrentStreams());
            AtomicLong maxInUse = new AtomicLong();
            AtomicLong longestWaitNanos = new AtomicLong();
            List<Future<Long>> results = new ArrayList<>();
            long start = System.nanoTime();
            for (int i = 0; i < streams; i++) {
                int seed = i;
                results.add(threads.submit(() -> {
                    long t0 = System.nanoTime();
                    BusStream stream = connection.open(dataStream(seed + 1), slotTimeout);
                    longestWaitNanos.accumulateAndGet(System.nanoTime() - t0, Math::max);
                    maxInUse.accumulateAndGet(h.streamsInUse(), Math::max);
                    stream.write(ByteBuffer.wrap(pattern(0, size, seed)));
                    stream.endRequest();
                    assertEquals(200, stream.awaitResponseHead(WAIT).status());
                    return readAllVerified(stream, seed);
                }));
            }
            for (Future<Long> r : results) {
                assertEquals(size, r.get());
            }
            System.out.printf("[transport] %d streams, slot limit 100: %d ms total, longest slot wait %d ms, "
                            + "max in use %d%n", streams, Duration.ofNanos(System.nanoTime() - start).toMillis(),
                    Duration.ofNanos(longestWaitNanos.get()).toMillis(), maxInUse.get());
            assertTrue(maxInUse.get() <= 100, "never more streams than the local cap, below the peer's limit");
            assertTrue(connection.isOpen());
            Poll.await(() -> h.streamsInUse() == 0, WAIT, "all slots released");
            assertEquals(0, h.streamsTracked(), "the connection remembers no finished stream");
        }
    }

    @Test
    void oneStreamThroughputBothWays() throws Exception {
        long total = 32L * 1024 * 1024; // recorded, not asserted; the load harness measures longer runs
        int write = 64 * 1024;
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
             TestRouter router = TestRouter.builder(TransportFixture.SERVER).start();
             BusConnection connection = TransportFixture.connector().connect(endpoint(router.busUrl()))) {
            BusStream stream = connection.open(dataStream(1), WAIT);
            RouterStream routed = router.nextStream(WAIT);
            routed.sendHead(200);
            stream.awaitResponseHead(WAIT);
            byte[] block = new byte[write];
            long start = System.nanoTime();
            Future<Long> routerReads = threads.submit(() -> {
                byte[] buffer = new byte[write];
                long n = 0;
                int r;
                try (InputStream in = routed.requestBody()) {
                    while ((r = in.read(buffer)) >= 0) {
                        n += r;
                    }
                }
                return n;
            });
            Future<?> routerWrites = threads.submit(() -> {
                for (long sent = 0; sent < total; sent += write) {
                    routed.write(block);
                }
                // ends only once the request is read: Helidon 4.5.0's server refuses the read of the last DATA
                // frame of a stream both sides ended ("Stream is closed"; see BusTransportBasicsTest)
                routerReads.get();
                routed.end();
                return null;
            });
            Future<Long> clientReads = threads.submit(() -> {
                long n = 0;
                ByteBuffer b;
                while ((b = stream.read()) != null) {
                    n += b.remaining();
                    stream.release(b.remaining());
                }
                return n;
            });
            for (long sent = 0; sent < total; sent += write) {
                stream.write(ByteBuffer.wrap(block));
            }
            stream.endRequest();
            long upNanos = System.nanoTime() - start;
            assertEquals(total, routerReads.get());
            long up = System.nanoTime() - start;
            assertEquals(total, clientReads.get());
            routerWrites.get();
            long both = System.nanoTime() - start;
            double mib = total / (1024.0 * 1024.0);
            System.out.printf("[transport] one stream, 64 KiB writes, %.0f MiB each way concurrently: "
                            + "client->router %.1f MiB/s, router->client %.1f MiB/s (wall %d ms; client writes done "
                            + "after %d ms)%n", mib, mib / (up / 1e9), mib / (both / 1e9), both / 1_000_000,
                    upNanos / 1_000_000);
        }
    }
}
