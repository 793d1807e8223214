package io.continuum.broker.relay;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.net.LoopbackListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.testing.bus.EndToEnd;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The data path of bus-protocol-v1.md sections 2, 5 and 6 against a real router over TLS and
 * HTTP/2, with real loopback publisher sockets (R-BEH 2, 4, 5, 9).
 */
@EndToEnd
@ExtendWith({LeakCheck.class, BrokerHarness.CloseAfterEach.class})
@LeakCheck.IgnoreThreads(BrokerHarness.ROUTER_THREADS)
class DataPathTest {
    private BrokerHarness h;

    @Test
    void helloDeclaresTheBrokerAndWelcomeStartsTheSession() {
        h = new BrokerHarness();
        RouterSession session = h.startSession();
        Frame.Hello hello = session.hello();
        assertEquals(List.of(1), hello.protocolVersions());
        assertEquals("broker", hello.role());
        assertEquals("broker-a", hello.clientId());
        assertEquals("gpu-serving", hello.kubernetesNamespace());
        assertEquals(List.of("dynamo", "dynamo-canary"), hello.dynamoNamespaces());
        assertTrue(hello.agent().startsWith("continuum-event-broker/"), hello.agent());
        await(h.metrics::connected, "session_connected = 1");
        assertEquals(1, h.metrics.get("session_attempts_total{result=welcomed}"));
    }

    @Test
    void publisherAndRouterBytesCrossTheTunnelUnalteredBothWays() throws Exception {
        h = new BrokerHarness();
        BrokerHarness.Subscribed subscribed = h.startSubscribed(17);
        assertEquals("Bearer " + BrokerHarness.CREDENTIAL, subscribed.stream().headers().get("authorization"));
        assertEquals(subscribed.session().sessionId(), subscribed.stream().headers().get("continuum-session-id"));
        assertEquals("application/octet-stream", subscribed.stream().headers().get("content-type"));

        byte[] fromPublisher = new byte[512 * 1024];
        byte[] fromRouter = new byte[300_000];
        Random random = new Random(42);
        random.nextBytes(fromPublisher);
        random.nextBytes(fromRouter);

        // Both directions at once, each end written and read by its own thread.
        Thread publisherWrites = Thread.ofVirtual().start(() -> {
            try {
                OutputStream out = subscribed.upstream().getOutputStream();
                for (int off = 0; off < fromPublisher.length; off += 7_777) {
                    out.write(fromPublisher, off, Math.min(7_777, fromPublisher.length - off));
                }
                out.flush();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        Thread routerWrites = Thread.ofVirtual().start(() -> {
            try {
                subscribed.stream().writeToBroker(fromRouter);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        byte[][] atPublisher = new byte[1][];
        Thread publisherReads = Thread.ofVirtual().start(() -> {
            try {
                atPublisher[0] = subscribed.upstream().getInputStream().readNBytes(fromRouter.length);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertArrayEquals(fromPublisher, subscribed.stream().readFromBroker(fromPublisher.length));
        publisherReads.join(WAIT.toMillis());
        assertArrayEquals(fromRouter, atPublisher[0]);
        publisherWrites.join(WAIT.toMillis());
        routerWrites.join(WAIT.toMillis());

        await(() -> h.metrics.get("relayed_bytes_total{direction=upstream_to_router}") == fromPublisher.length,
                "upstream_to_router bytes counted exactly");
        await(() -> h.metrics.get("relayed_bytes_total{direction=router_to_upstream}") == fromRouter.length,
                "router_to_upstream bytes counted exactly");
        assertEquals(1, h.metrics.get("subscribes_total{result=opened}"));
        assertEquals(1, h.broker.openStreams());
    }

    /**
     * A publisher that stops reading: the router's bytes wait in the full socket and in the stream's window, the
     * publisher's own bytes still reach the router meanwhile (one readiness loop reads every publisher socket and
     * serves the waiting write too: neither may hold up the other), and once it reads again every byte arrives, in
     * order.
     */
    @Test
    void aPublisherThatStopsReadingHoldsTheRouterBytesButNotItsOwn() throws Exception {
        h = new BrokerHarness();
        BrokerHarness.Subscribed subscribed = h.startSubscribed(11);
        Socket upstream = subscribed.upstream();
        // The publisher's receive buffer fixed at 64 KiB (no autotuning up to tens of MiB), and the router sending
        // more than it and the broker's send buffer at its largest can hold: the broker's writes must wait.
        upstream.setReceiveBufferSize(64 * 1024);
        byte[] fromRouter = new byte[(int) (tcpBufferMax("tcp_wmem") + (8L << 20))];
        new Random(11).nextBytes(fromRouter);
        Thread routerWrites = Thread.ofVirtual().start(() -> {
            try {
                subscribed.stream().writeToBroker(fromRouter);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        await(() -> h.metrics.get("relayed_bytes_total{direction=router_to_upstream}") > 0, "router bytes relayed");

        byte[] fromPublisher = "still flowing".getBytes(StandardCharsets.US_ASCII);
        upstream.getOutputStream().write(fromPublisher);
        assertArrayEquals(fromPublisher, subscribed.stream().readFromBroker(fromPublisher.length));
        assertTrue(routerWrites.isAlive(), "the router's write waits for the publisher");

        byte[] atPublisher = upstream.getInputStream().readNBytes(fromRouter.length);
        assertArrayEquals(fromRouter, atPublisher);
        routerWrites.join(WAIT.toMillis());
        assertEquals(fromRouter.length, h.metrics.get("relayed_bytes_total{direction=router_to_upstream}"));
    }

    /** The largest buffer the kernel gives a TCP socket ({@code net.ipv4.tcp_rmem} or {@code tcp_wmem}, third field). */
    private static long tcpBufferMax(String sysctl) throws IOException {
        String[] fields;
        // read as a stream: procfs reports a size of 0
        try (InputStream in = Files.newInputStream(Path.of("/proc/sys/net/ipv4", sysctl))) {
            fields = new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim().split("\\s+");
        }
        return Long.parseLong(fields[2]);
    }

    @Test
    void publisherEofEndsTheRequestBodyAndReportsUpstreamClosed() throws Exception {
        h = new BrokerHarness();
        BrokerHarness.Subscribed subscribed = h.startSubscribed(5);
        subscribed.upstream().getOutputStream().write(new byte[] {1, 2, 3});
        subscribed.upstream().close();
        // the router reads the body up to END_STREAM, then ends its response (docs/protocol.md): the stream
        // closes without a reset and only then is stream_closed sent
        InputStream in = subscribed.stream().fromBroker();
        assertArrayEquals(new byte[] {1, 2, 3}, in.readNBytes(3));
        assertEquals(-1, in.read(), "the request body ends after the publisher's last byte");
        subscribed.stream().end();
        Frame.StreamClosed closed = subscribed.session().await(Frame.StreamClosed.class, f -> f.streamId() == 5, WAIT);
        assertEquals(Code.UPSTREAM_CLOSED, closed.code());
        assertEquals(1, h.metrics.get("stream_closes_total{code=upstream_closed}"));
        await(() -> h.broker.openStreams() == 0, "open_streams back to 0");
    }

    @Test
    void unsubscribeClosesThePublisherSocketSilently() throws Exception {
        h = new BrokerHarness();
        LoopbackListener publisher = h.publisher();
        RouterSession session = h.startSession();
        session.subscribe(3, NAMESPACE, "127.0.0.1", publisher.port());
        Socket upstream = publisher.awaitConnection();
        session.awaitAnswer(3, WAIT);
        h.router.awaitDataStream(3, WAIT);
        session.unsubscribe(3);
        assertEquals(-1, upstream.getInputStream().read(), "the broker closed the publisher socket");
        await(() -> h.broker.openStreams() == 0, "stream gone");
        session.send(Frame.Heartbeat.INSTANCE);
        assertTrue(session.drainReceived().stream().noneMatch(f -> f instanceof Frame.StreamClosed),
                "an unsubscribed stream is closed silently");
        assertEquals(0, h.metrics.get("stream_closes_total{code=upstream_closed}"));
    }

    @Test
    void aRouterResetClosesThePublisherSocketAndReportsNothing() throws Exception {
        h = new BrokerHarness();
        BrokerHarness.Subscribed subscribed = h.startSubscribed(4);
        subscribed.stream().reset();
        assertEquals(-1, subscribed.upstream().getInputStream().read());
        await(() -> h.broker.openStreams() == 0, "stream gone");
        assertTrue(subscribed.session().drainReceived().stream().noneMatch(f -> f instanceof Frame.StreamClosed));
    }

    @Test
    void a404UnknownStreamClosesThePublisherSocketAndReportsNothing() throws Exception {
        h = new BrokerHarness();
        LoopbackListener publisher = h.publisher();
        h.start();
        h.router.streamPolicy(InProcessRouter.StreamPolicy.NOT_FOUND);
        RouterSession session = h.router.awaitSession(WAIT);
        Socket upstream = BrokerHarness.subscribeAndAwaitOpened(session, 6, publisher);
        assertEquals(-1, upstream.getInputStream().read());
        await(() -> h.broker.openStreams() == 0, "stream gone");
        assertTrue(session.drainReceived().stream().noneMatch(f -> f instanceof Frame.StreamClosed));
    }

    @Test
    void aResponseHeadLaterThanTheDeadlineEndsInIdleTimeout() throws Exception {
        h = new BrokerHarness(c -> c.timeouts(shrunk(Duration.ofMillis(300))), r -> r);
        LoopbackListener publisher = h.publisher();
        h.start();
        h.router.streamPolicy(InProcessRouter.StreamPolicy.HOLD_HEAD);
        RouterSession session = h.router.awaitSession(WAIT);
        Socket upstream = BrokerHarness.subscribeAndAwaitOpened(session, 8, publisher);
        Frame.StreamClosed closed = session.await(Frame.StreamClosed.class, f -> f.streamId() == 8, WAIT);
        assertEquals(Code.IDLE_TIMEOUT, closed.code());
        assertEquals(-1, upstream.getInputStream().read(), "the upstream socket is closed on expiry");
        h.router.awaitDataStream(8, WAIT).end();
    }

    @Test
    void theSpecDeadlinesAreTheDefaults() {
        RelayConfig.Timeouts t = RelayConfig.Timeouts.SPEC;
        assertEquals(Duration.ofSeconds(5), t.dnsResolution());
        assertEquals(Duration.ofSeconds(10), t.upstreamConnectTotal());
        assertEquals(Duration.ofSeconds(5), t.streamSlot());
        assertEquals(Duration.ofSeconds(10), t.responseHead());
        assertEquals(Duration.ofSeconds(60), t.stableSession());
        assertEquals(64L * 1024 * 1024, t.sessionBufferBytes());
        RelayConfig c = RelayConfig.builder().busUrl(java.net.URI.create("https://r")).credential(() -> Credential.of("x"))
                .clientId("c").kubernetesNamespace("k").build();
        assertEquals(Duration.ofSeconds(1), c.reconnectBackoff().initial());
        assertEquals(Duration.ofSeconds(60), c.reconnectBackoff().max());
        assertEquals(Duration.ofSeconds(25), c.drainDeadline());
        assertEquals(Duration.ofSeconds(5), c.upstreamConnectTimeout());
        assertEquals(Duration.ofSeconds(10), c.busConnectTimeout());
        assertTrue(Arrays.asList(c.toString().split(",")).stream().noneMatch(s -> s.contains("credential=x")));
    }

    static RelayConfig.Timeouts shrunk(Duration responseHead) {
        RelayConfig.Timeouts s = RelayConfig.Timeouts.SPEC;
        return new RelayConfig.Timeouts(s.dnsResolution(), s.upstreamConnectTotal(), s.streamSlot(), responseHead,
                s.stableSession(), s.sessionBufferBytes(), s.maxConcurrentDials());
    }
}
