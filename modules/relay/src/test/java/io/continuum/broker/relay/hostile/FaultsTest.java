package io.continuum.broker.relay.hostile;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.testing.bus.RouterDataStream;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.leaks.Census;
import io.continuum.broker.testing.net.LoopbackListener;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Faults in the spirit of the best tunnel suites, against a real router and real sockets
 * (bus-protocol-v1.md sections 4-6, R-BEH): an abortive close mid-transfer, a flapping publisher,
 * one-byte writes both ways, the bus connection cut again and again, and a drain under load.
 */
class FaultsTest {
    @Test
    void anAbortiveCloseMidTransferIsUpstreamClosedAndTheOtherStreamFlows() throws Exception {
        try (BrokerHarness h = new BrokerHarness()) {
            LoopbackListener publisher = h.publisher();
            RouterSession session = h.startSession();
            BrokerHarness.OpenStream opened1 = h.open(session, 1, publisher);
            Socket aborted = opened1.upstream();
            RouterDataStream abortedStream = opened1.stream();
            BrokerHarness.OpenStream opened2 = h.open(session, 2, publisher);
            Socket healthy = opened2.upstream();
            RouterDataStream healthyStream = opened2.stream();

            byte[] half = new byte[128 * 1024];
            new Random(1).nextBytes(half);
            aborted.getOutputStream().write(half);
            assertArrayEquals(half, abortedStream.readFromBroker(half.length));
            // Mid-transfer: more bytes in flight, then RST instead of FIN.
            aborted.getOutputStream().write(new byte[64 * 1024]);
            aborted.setSoLinger(true, 0);
            aborted.close();
            // The router reads on: what the broker had queued before the reset still reaches it, then the end.
            Thread.ofVirtual().start(() -> {
                try {
                    abortedStream.fromBroker().transferTo(OutputStream.nullOutputStream());
                } catch (IOException ignored) {
                    // reset later
                }
            });
            assertEquals(Code.UPSTREAM_CLOSED,
                    session.await(Frame.StreamClosed.class, f -> f.streamId() == 1, WAIT).code());

            byte[] payload = new byte[100_000];
            new Random(2).nextBytes(payload);
            healthy.getOutputStream().write(payload);
            assertArrayEquals(payload, healthyStream.readFromBroker(payload.length));
            await(() -> h.broker.openStreams() == 1, "only the healthy stream is open");
            assertEquals(1, h.router.sessionAttempts());
        }
    }

    @Test
    void aFlappingPublisherIsRefusedWhileDownAndServedAgainWhenBack() throws Exception {
        try (BrokerHarness h = new BrokerHarness()) {
            int port;
            try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = probe.getLocalPort();
            }
            h.view.advertise(NAMESPACE, "127.0.0.1", port);
            RouterSession session = h.startSession();
            long id = 0;
            for (int cycle = 0; cycle < 3; cycle++) {
                // Up: accepts, serves, then closes.
                try (LoopbackListener up = LoopbackListener.on("publisher", listen(port))) {
                    session.subscribe(++id, NAMESPACE, "127.0.0.1", port);
                    Socket upstream = up.awaitConnection();
                    RouterDataStream stream = h.router.awaitDataStream(id, WAIT);
                    upstream.getOutputStream().write(new byte[] {(byte) cycle});
                    assertEquals(cycle, stream.readFromBroker(1)[0]);
                    upstream.close();
                    long closedId = id;
                    assertEquals(Code.UPSTREAM_CLOSED,
                            session.await(Frame.StreamClosed.class, f -> f.streamId() == closedId, WAIT).code());
                }
                // Down: nothing listens (the publisher's close returns only once its port refuses).
                session.subscribe(++id, NAMESPACE, "127.0.0.1", port);
                assertEquals(Code.UPSTREAM_CONNECT_FAILED,
                        assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(id, WAIT)).code());
            }
            assertEquals(3, h.metrics.get("subscribes_total{result=opened}"));
            assertEquals(3, h.metrics.get("refusals_total{code=upstream_connect_failed}"));
            await(() -> h.broker.openStreams() == 0, "nothing left open");
            assertEquals(1, h.router.sessionAttempts());
        }
    }

    @Test
    void oneByteWritesBothWaysArriveInOrderAndComplete() throws Exception {
        int count = 1_000;
        try (BrokerHarness h = new BrokerHarness()) {
            LoopbackListener publisher = h.publisher();
            RouterSession session = h.startSession();
            session.subscribe(1, NAMESPACE, "127.0.0.1", publisher.port());
            Socket upstream = publisher.awaitConnection();
            upstream.setTcpNoDelay(true);
            RouterDataStream stream = h.router.awaitDataStream(1, WAIT);
            Thread publisherWrites = Thread.ofVirtual().start(() -> {
                try {
                    OutputStream out = upstream.getOutputStream();
                    for (int i = 0; i < count; i++) {
                        out.write(i & 0xFF);
                        out.flush();
                    }
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            Thread routerWrites = Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 0; i < count; i++) {
                        stream.writeToBroker(new byte[] {(byte) (i * 7)});
                    }
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            byte[][] atPublisher = new byte[1][];
            Thread publisherReads = Thread.ofVirtual().start(() -> {
                try {
                    atPublisher[0] = upstream.getInputStream().readNBytes(count);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            byte[] atRouter = stream.readFromBroker(count);
            publisherReads.join(WAIT.toMillis());
            publisherWrites.join(WAIT.toMillis());
            routerWrites.join(WAIT.toMillis());
            for (int i = 0; i < count; i++) {
                assertEquals((byte) i, atRouter[i], "publisher byte " + i);
                assertEquals((byte) (i * 7), atPublisher[0][i], "router byte " + i);
            }
            await(() -> h.metrics.get("relayed_bytes_total{direction=router_to_upstream}") == count, "counted");
            await(() -> h.metrics.get("relayed_bytes_total{direction=upstream_to_router}") == count, "counted");
        }
    }

    @Test
    void aBusConnectionCutAgainAndAgainEndsEachSessionOnceAndLeaksNothing() throws Exception {
        int cuts = 6;
        try (BrokerHarness h = new BrokerHarness(true)) {
            LoopbackListener publisher = h.publisher();
            RouterSession session = h.startSession();
            Socket upstream = openOneStream(h, session, publisher, 1);
            int threadsBefore = brokerThreads();
            long fdsBefore = openFds();
            for (int cut = 1; cut <= cuts; cut++) {
                h.proxy.cutAll();
                assertEquals(-1, readQuietly(upstream), "the stream ended with the connection (cut " + cut + ")");
                upstream.close();
                session = h.router.awaitSession(WAIT);
                upstream = openOneStream(h, session, publisher, cut + 1);
                int ended = cut;
                await(() -> h.metrics.get("session_ends_total{reason=connection_lost}") == ended,
                        "cut " + ended + " counted once");
            }
            assertEquals(cuts, h.metrics.get("reconnects_total"));
            assertEquals(cuts + 1, h.router.sessionAttempts());
            assertEquals(cuts + 1, h.metrics.get("session_attempts_total{result=welcomed}"));
            // Back in the state of the baseline (one welcomed session, one open stream): no thread and no
            // socket of the cut sessions is left.
            await(() -> brokerThreads() <= threadsBefore, "broker threads back to " + threadsBefore);
            await(() -> openFds() <= fdsBefore, "file descriptors back to " + fdsBefore);
            await(() -> h.broker.openStreams() == 1, "only the last session's stream is open");
        }
    }

    @Test
    void aDrainUnderLoadLetsOpenStreamsRunToTheDeadlineRefusesNewOnesThenReconnects() throws Exception {
        long deadlineMs = 1_500;
        // TCP_NODELAY on the router, or its WINDOW_UPDATEs wait for Nagle and throttle the streams.
        try (BrokerHarness h = new BrokerHarness(c -> c, r -> r.tcpNoDelay(true))) {
            LoopbackListener publisher = h.publisher();
            RouterSession session = h.startSession();
            int streams = 3;
            List<Socket> upstreams = new ArrayList<>();
            AtomicLong received = new AtomicLong();
            for (long id = 1; id <= streams; id++) {
                session.subscribe(id, NAMESPACE, "127.0.0.1", publisher.port());
                Socket upstream = publisher.awaitConnection();
                upstreams.add(upstream);
                RouterDataStream stream = h.router.awaitDataStream(id, WAIT);
                Thread.ofVirtual().start(() -> {
                    byte[] chunk = new byte[4 * 1024];
                    try {
                        OutputStream out = upstream.getOutputStream();
                        while (true) {
                            out.write(chunk);
                            Thread.sleep(5); // a steady publisher, well within what the router reads
                        }
                    } catch (IOException | InterruptedException expected) {
                        // the stream ended with the session
                    }
                });
                Thread.ofVirtual().start(() -> {
                    byte[] buf = new byte[16 * 1024];
                    try {
                        InputStream in = stream.fromBroker();
                        int n;
                        while ((n = in.read(buf)) >= 0) {
                            received.addAndGet(n);
                        }
                    } catch (IOException expected) {
                        // reset with the session
                    }
                });
            }
            long before = received.get();
            await(() -> received.get() > before, "data flows before the drain");
            session.send(new Frame.Drain(Frame.Drain.REASON_REBALANCE, OptionalLong.of(deadlineMs)));
            long drainSent = System.nanoTime();
            session.subscribe(99, NAMESPACE, "127.0.0.1", publisher.port());
            assertEquals(Code.DRAINING,
                    assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(99, WAIT)).code());
            long atDrain = received.get();
            await(() -> received.get() > atDrain + 64 * 1024, "the open streams keep carrying data while draining");
            assertTrue(session.awaitEnded(WAIT), "the session ends at the deadline");
            long drainedAfterMs = (System.nanoTime() - drainSent) / 1_000_000;
            assertTrue(drainedAfterMs >= deadlineMs - 50, "ended after " + drainedAfterMs + " ms, not before the deadline");
            for (Socket s : upstreams) {
                assertEquals(-1, readQuietly(s), "the publisher socket closed with the session");
            }
            RouterSession next = h.router.awaitSession(WAIT);
            await(() -> h.metrics.get("session_ends_total{reason=drained}") == 1, "drained counted");
            assertTrue(session.drainReceived().stream().noneMatch(f -> f instanceof Frame.StreamClosed),
                    "streams that end with the drained session are not reported");
            next.subscribe(100, NAMESPACE, "127.0.0.1", publisher.port());
            assertInstanceOf(Frame.StreamOpened.class, next.awaitAnswer(100, WAIT), "the new session serves");
        }
    }

    private static Socket openOneStream(BrokerHarness h, RouterSession session, LoopbackListener publisher,
                                        long id) throws IOException {
        BrokerHarness.OpenStream openedId = h.open(session, id, publisher);
        Socket upstream = openedId.upstream();
        RouterDataStream stream = openedId.stream();
        upstream.getOutputStream().write(new byte[] {9});
        assertEquals(9, stream.readFromBroker(1)[0]);
        return upstream;
    }

    /** Waits, bounded, until a connect to the loopback port is refused: nothing listens there any more. */
    private static ServerSocket listen(int port) throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
        return s;
    }

    private static int readQuietly(Socket s) {
        try {
            return s.getInputStream().read();
        } catch (IOException e) {
            return -1;
        }
    }

    /** Live threads (virtual ones included) running relay or Helidon client code. */
    private static int brokerThreads() {
        return (int) Census.threads().values().stream()
                .filter(t -> t.stack().stream().anyMatch(f -> f.contains("io.continuum.broker.relay.session")
                        || f.contains("io.continuum.broker.relay.stream")
                        || f.contains("io.continuum.broker.relay.loop")
                        || f.contains("io.continuum.broker.relay.dial")
                        || f.contains("io.continuum.broker.relay.transport")
                        || f.contains("io.helidon.webclient")))
                .count();
    }

    private static long openFds() {
        return Census.fileDescriptors().size();
    }
}
