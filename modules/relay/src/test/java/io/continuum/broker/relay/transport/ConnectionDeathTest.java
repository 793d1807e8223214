package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static io.continuum.broker.relay.transport.TransportFixture.pattern;
import static io.continuum.broker.relay.transport.TransportFixture.readAllVerified;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.continuum.broker.testing.await.Poll;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.Http2;
import io.continuum.broker.testing.leaks.Census;
import io.continuum.broker.testing.router.RawH2Peer;
import io.continuum.broker.testing.router.RouterStream;
import io.continuum.broker.testing.router.TestRouter;
import org.junit.jupiter.api.Test;

/**
 * A dead connection (cut, GOAWAY, silent peer) fails every open stream's reader and writer promptly with a typed
 * error, fires onClose once, and leaves no thread or socket behind; a cancelled stream's reader wakes; a reset
 * stream leaves the others alone.
 */
class ConnectionDeathTest {

    /** Failure outcome of one blocked operation. */
    private static Future<Throwable> blocked(ExecutorService threads, Callable op) {
        return threads.submit(() -> {
            try {
                op.call();
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
    }

    @FunctionalInterface
    private interface Callable {
        void call() throws Exception;
    }

    @Test
    @SuppressWarnings("try") // closes inside the try on purpose: behaviour after close is under test
    void cutMidTransferFailsEveryStreamAndLeaksNothing() throws Exception {
        long before = transportThreads();
        long socketsBefore;
        // a 64 KiB router window: Helidon's server queues at most 32 frames per unread stream and then stops
        // reading the whole connection; small windows keep the client's writers blocked on flow control instead
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
             TestRouter router = TestRouter.builder(TransportFixture.SERVER).initialWindowSize(65_535).start();
             BusConnection connection = TransportFixture.connector().connect(endpoint(router.busUrl()))) {
            socketsBefore = openSockets() - 4; // client, proxy (2), router side of this connection
            AtomicInteger closeEvents = new AtomicInteger();
            AtomicReference<TransportException> closeCause = new AtomicReference<>();
            CountDownLatch closed = new CountDownLatch(1);
            connection.onClose(e -> {
                closeEvents.incrementAndGet();
                closeCause.set(e);
                closed.countDown();
            });
            List<Future<Throwable>> outcomes = new ArrayList<>();
            CountDownLatch flowing = new CountDownLatch(5);
            for (int i = 0; i < 5; i++) {
                BusStream stream = connection.open(dataStream(i + 1), WAIT);
                RouterStream routed = router.nextStream(WAIT);
                routed.sendHead(200);
                stream.awaitResponseHead(WAIT);
                // router -> client: 32 KiB, then the client reader blocks in read() waiting for more
                routed.write(pattern(0, 32_768, 1));
                outcomes.add(blocked(threads, () -> {
                    flowing.countDown();
                    while (true) {
                        stream.read();
                    }
                }));
                // client -> router: the router never reads, so the writer blocks on flow control
                outcomes.add(blocked(threads, () -> {
                    while (true) {
                        stream.write(ByteBuffer.wrap(new byte[65_536]));
                    }
                }));
            }
            assertTrue(flowing.await(20, TimeUnit.SECONDS));
            long cutAt = System.nanoTime();
            router.cutConnections();
            for (Future<Throwable> outcome : outcomes) {
                Throwable t = outcome.get(10, TimeUnit.SECONDS); // socket loss is noticed at once; 10 s is slack
                assertInstanceOf(ConnectionLostException.class, t);
            }
            long noticedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cutAt);
            System.out.println("[transport] cut noticed by all 10 blocked readers/writers within " + noticedMillis
                    + " ms");
            assertTrue(closed.await(10, TimeUnit.SECONDS));
            assertEquals(ConnectionLostException.Reason.SOCKET,
                    ((ConnectionLostException) closeCause.get()).reason());
            connection.close();
            assertEquals(1, closeEvents.get(), "onClose fires exactly once");
            assertFalse(connection.isOpen());
            assertThrows(ConnectionLostException.class, () -> connection.open(dataStream(9), WAIT));
            Poll.await(() -> transportThreads() <= before, WAIT,
                    "transport threads ended");
            Poll.await(() -> openSockets() <= socketsBefore, WAIT,
                    "the connection's sockets closed (" + socketsBefore + " before)");
        }
    }

    @Test
    void silentPeerIsDetectedByKeepaliveWithinTheBound() throws Exception {
        TransportSettings fast = TransportSettings.defaults()
                .withKeepalive(Duration.ofMillis(200), Duration.ofMillis(500));
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
             TestRouter router = TestRouter.builder(TransportFixture.SERVER).start()) {
            BusConnection connection = TransportFixture.connector(fast).connect(endpoint(router.busUrl()));
            BusStream stream = connection.open(dataStream(1), WAIT);
            router.nextStream(WAIT).sendHead(200);
            stream.awaitResponseHead(WAIT);
            Future<Throwable> reader = blocked(threads, stream::read);
            long start = System.nanoTime();
            router.blackhole(true);
            Throwable t = reader.get(10, TimeUnit.SECONDS);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            ConnectionLostException lost = assertInstanceOf(ConnectionLostException.class, t);
            assertEquals(ConnectionLostException.Reason.KEEPALIVE_TIMEOUT, lost.reason());
            System.out.println("[transport] silent peer noticed after " + millis + " ms (bound "
                    + fast.deathDetectionBound().toMillis() + " ms)");
            connection.close();
            router.blackhole(false);
        }
    }

    /**
     * A peer that stops taking bytes off its socket (its TCP receive window stays shut) while the connection is
     * otherwise fine: a DATA write blocks inside the socket write holding the connection's frame writer, other
     * writes queue behind it, and the keepalive's PING cannot go out. The keepalive still declares the connection
     * dead within its bound (the PING is written from its own thread, the deadline does not wait for it), and
     * closing the socket returns every blocked write.
     */
    @Test
    void aPeerWhoseReceiveWindowStaysShutIsDeclaredDeadAndBlockedWritesReturn() throws Exception {
        TransportSettings fast = TransportSettings.defaults()
                .withKeepalive(Duration.ofMillis(200), Duration.ofMillis(500));
        int wide = Integer.MAX_VALUE;
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
             RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of(Http2.SETTINGS_INITIAL_WINDOW_SIZE, (long) wide))) {
            BusConnection connection = TransportFixture.connector(fast).connect(endpoint(peer.busUrl()));
            RawH2Peer.Connection wire = peer.accept(WAIT);
            wire.sendWindowUpdate(0, wide - 65_535); // flow control never holds a write back: only the socket can
            BusStream writing = connection.open(dataStream(1), WAIT);
            BusStream releasing = connection.open(dataStream(2), WAIT);
            wire.sendStatus200(1, false);
            wire.sendStatus200(3, false);
            writing.awaitResponseHead(WAIT);
            releasing.awaitResponseHead(WAIT);
            wire.sendData(3, new byte[1000], false);
            assertEquals(1000, releasing.read().remaining()); // read, released only once the writer is stuck
            wire.stopReading();

            AtomicReference<Thread> writerThread = new AtomicReference<>();
            Future<Throwable> writer = blocked(threads, () -> {
                writerThread.set(Thread.currentThread());
                while (true) {
                    writing.write(ByteBuffer.wrap(new byte[65_536]));
                }
            });
            Poll.await(() -> inSocketWrite(writerThread.get()), WAIT,
                    "the DATA writer is blocked inside the socket write");
            Future<Throwable> release = blocked(threads, () -> releasing.release(1000)); // WINDOW_UPDATE: no window
            Future<Throwable> end = blocked(threads, releasing::endRequest);

            long start = System.nanoTime();
            ConnectionLostException lost = assertInstanceOf(ConnectionLostException.class,
                    writer.get(10, TimeUnit.SECONDS));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(ConnectionLostException.Reason.KEEPALIVE_TIMEOUT, lost.reason());
            Throwable releaseOutcome = release.get(10, TimeUnit.SECONDS);
            assertTrue(releaseOutcome == null || releaseOutcome instanceof TransportException,
                    "the WINDOW_UPDATE returns, written or failed: " + releaseOutcome);
            Throwable endOutcome = end.get(10, TimeUnit.SECONDS);
            assertTrue(endOutcome == null || endOutcome instanceof TransportException,
                    "END_STREAM returns, written or failed: " + endOutcome);
            assertFalse(connection.isOpen());
            System.out.println("[transport] peer with a shut receive window declared dead after " + millis
                    + " ms (bound " + fast.deathDetectionBound().toMillis() + " ms)");
            connection.close();
            wire.close();
        }
    }

    /** Whether the thread is blocked writing to a socket (a TLS record on its way out). */
    private static boolean inSocketWrite(Thread thread) {
        if (thread == null) {
            return false;
        }
        for (StackTraceElement frame : thread.getStackTrace()) {
            if (frame.getClassName().contains("SSLSocketImpl$AppOutputStream")
                    || frame.getClassName().contains("NioSocketImpl") && frame.getMethodName().startsWith("write")) {
                return true;
            }
        }
        return false;
    }

    @Test
    void goAwayWithAnErrorCodeFailsEveryStreamWithReasonGoaway() throws Exception {
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
             RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of())) {
            BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()));
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream stream = connection.open(dataStream(1), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
            Future<Throwable> reader = blocked(threads, stream::read);
            CompletableFuture<TransportException> closed = new CompletableFuture<>();
            connection.onClose(closed::complete);
            wire.sendGoAway(1, ErrorCode.INTERNAL_ERROR.code()); // stream 1 was processed, and it fails all the same
            ConnectionLostException lost = assertInstanceOf(ConnectionLostException.class,
                    reader.get(10, TimeUnit.SECONDS));
            assertEquals(ConnectionLostException.Reason.GOAWAY, lost.reason());
            assertEquals(ConnectionLostException.Reason.GOAWAY,
                    ((ConnectionLostException) closed.get(10, TimeUnit.SECONDS)).reason());
            connection.close();
        }
    }

    @Test
    void oneStreamResetOthersAlive() throws Exception {
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
             TestRouter router = TestRouter.builder(TransportFixture.SERVER).start();
             BusConnection connection = TransportFixture.connector().connect(endpoint(router.busUrl()))) {
            List<BusStream> streams = new ArrayList<>();
            List<RouterStream> routed = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                streams.add(connection.open(dataStream(i + 1), WAIT));
                routed.add(router.nextStream(WAIT));
                routed.get(i).sendHead(200);
                streams.get(i).awaitResponseHead(WAIT);
            }
            Future<Throwable> victim = blocked(threads, () -> streams.get(1).read());
            routed.get(1).reset(ErrorCode.INTERNAL_ERROR.code());
            Throwable victimOutcome;
            try {
                victimOutcome = victim.get(10, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError("stream " + streams.get(1) + " not woken, connection open "
                        + connection.isOpen(), e);
            }
            StreamResetException reset = assertInstanceOf(StreamResetException.class, victimOutcome);
            assertEquals(ErrorCode.INTERNAL_ERROR.code(), reset.errorCode());
            for (int i : new int[] {0, 2}) {
                int seed = i;
                RouterStream r = routed.get(i);
                Future<Long> echoed = threads.submit(() -> readAllVerified(r.requestBody(), seed));
                threads.submit(() -> {
                    for (int off = 0; off < 200_000; off += 20_000) {
                        r.write(pattern(off, 20_000, seed));
                    }
                    // the router ends its side only once it has read the whole request: Helidon 4.5.0's server
                    // marks a stream closed when both sides ended and then refuses a read of body bytes it still
                    // holds ("Stream is closed"), which made this test fail now and then under load
                    echoed.get();
                    r.end();
                    return null;
                });
                for (int off = 0; off < 200_000; off += 50_000) {
                    streams.get(i).write(ByteBuffer.wrap(pattern(off, 50_000, seed)));
                }
                streams.get(i).endRequest();
                assertEquals(200_000, readAllVerified(streams.get(i), seed));
                assertEquals(200_000, echoed.get());
            }
            assertTrue(connection.isOpen());
        }
    }

    /** Live threads, virtual ones included, inside the transport. */
    private static long transportThreads() {
        return Census.threads().values().stream()
                .filter(t -> t.name().startsWith("bus-") || t.stack().stream().anyMatch(frame ->
                        frame.contains("io.continuum.broker.relay.transport.Http2Bus")))
                .count();
    }

    /** Open socket descriptors of this process. */
    private static long openSockets() {
        return Census.fileDescriptors().values().stream().filter(link -> link.startsWith("socket:")).count();
    }
}
