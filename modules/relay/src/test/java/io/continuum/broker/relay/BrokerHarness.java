package io.continuum.broker.relay;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;

import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.api.Cidr;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.dial.Connector;
import io.continuum.broker.relay.transport.TrackingConnector;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.bus.RouterDataStream;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.ServerIdentity;
import io.continuum.broker.testing.router.RawH2Peer;
import io.continuum.broker.testing.router.TcpFaultProxy;
import io.continuum.broker.testing.secrets.Secrets;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real broker against a real in-process router (TLS with an ephemeral CA, HTTP/2) and real
 * loopback publishers. One per test; {@link #close} tears everything down.
 * <p>
 * Every credential it hands out is registered with {@link Secrets}, so the test-wide scan fails a
 * test in which one reaches a log line or the console (R-SEC-14). Under {@link LeakCheck} it
 * registers three gauges that must be back to 0 after the test: the broker's open data streams,
 * the HTTP/2 stream slots in use on every bus connection it opened, and its open bus connections.
 */
public final class BrokerHarness implements AutoCloseable {
    public static final String CREDENTIAL = Secrets.register("test-credential-0123456789abcdef0123456789");
    public static final String NAMESPACE = "dynamo";
    /**
     * Threads of the in-process router (the test peer, not the broker), for {@link LeakCheck.IgnoreThreads}:
     * Helidon 4.5.0's server does not wake a handler blocked reading a request body when the client's TCP
     * connection closes, so the router's session reader and Helidon's handler thread (named
     * {@code [0x.. 0x.. ] - n}) and a bridge's reader ({@code bridge-<id>-in}) stay parked in {@code Http2ServerStream.readEntityFromPipeline} after the
     * broker hung up and even after {@code server.stop()}. The broker's side is checked by the gauges.
     */
    public static final String ROUTER_THREADS = "router-.*|bridge-\\d+-.*|\\[0x[0-9a-f]+ 0x[0-9a-f]+ \\] - \\d+";
    public static final Duration WAIT = Duration.ofSeconds(20);

    public static final EphemeralPki PKI = EphemeralPki.create();
    public static final ServerIdentity SERVER = PKI.localhostServer();

    public final InProcessRouter router;
    public final MutableView view = new MutableView().synced(true);
    public final CountingMetrics metrics = new CountingMetrics();
    public final EventBroker broker;
    /** The broker's bus connector, watched for HTTP/2 streams and connections left open. */
    public final TrackingConnector connector = new TrackingConnector();
    private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();
    /** Harnesses built and not yet closed, for {@link CloseAfterEach}; tests run one at a time per JVM. */
    private static final Set<BrokerHarness> OPEN = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** Between broker and router when the harness was built with one, so tests can cut the connection. */
    public final TcpFaultProxy proxy;

    public BrokerHarness() {
        this(UnaryOperator.identity(), r -> r, false);
    }

    public BrokerHarness(boolean withProxy) {
        this(UnaryOperator.identity(), r -> r, withProxy);
    }

    public BrokerHarness(UnaryOperator<RelayConfig.Builder> config,
                         UnaryOperator<InProcessRouter.Builder> routerConfig) {
        this(config, routerConfig, false);
    }

    public BrokerHarness(UnaryOperator<RelayConfig.Builder> config,
                         UnaryOperator<InProcessRouter.Builder> routerConfig, boolean withProxy) {
        this(config, routerConfig, withProxy, Connector.SYSTEM);
    }

    /**
     * @param upstream the publisher connect step (a wrapper that records dials; the connect itself stays real)
     */
    public BrokerHarness(UnaryOperator<RelayConfig.Builder> config,
                         UnaryOperator<InProcessRouter.Builder> routerConfig, boolean withProxy, Connector upstream) {
        router = routerConfig.apply(InProcessRouter.builder()
                .tls(SERVER.key(), List.of(SERVER.certificate()))
                .credential(CREDENTIAL)).start();
        try {
            proxy = withProxy ? new TcpFaultProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    router.port())) : null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        RelayConfig.Builder b = RelayConfig.builder()
                .busUrl(proxy == null ? router.url() : java.net.URI.create("https://localhost:" + proxy.port()))
                .caCertificates(() -> List.of(PKI.caCertificate()))
                .credential(() -> Credential.of(CREDENTIAL))
                .clientId("broker-a")
                .kubernetesNamespace("gpu-serving")
                .dynamoNamespaces(List.of(NAMESPACE, "dynamo-canary"))
                .allowedCidrs(List.of(Cidr.parse("127.0.0.0/8")))
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200))
                .busConnectTimeout(Duration.ofSeconds(10));
        RelayConfig built = config.apply(b).build();
        try {
            Secrets.register(built.credential().call().reveal());
        } catch (Exception e) {
            throw new IllegalStateException("the test's credential supplier failed", e);
        }
        broker = EventBroker.create(built, view, metrics, connector, RandomGenerator.getDefault(), upstream);
        LeakCheck.expect("broker open data streams", broker::openStreams, 0);
        LeakCheck.expect("broker HTTP/2 stream slots in use", connector::streamsInUse, 0);
        LeakCheck.expect("broker bus connections open", connector::openConnections, 0);
        OPEN.add(this);
    }

    /**
     * Closes every harness a test left open, so a test class keeps a harness in a field without a tear-down of its
     * own. Listed after {@link LeakCheck} in {@code @ExtendWith}, it runs before the leak check (JUnit runs "after"
     * callbacks in reverse order), as a tear-down method would.
     */
    public static final class CloseAfterEach implements AfterEachCallback {
        @Override
        public void afterEach(ExtensionContext context) {
            for (BrokerHarness h : List.copyOf(OPEN)) {
                h.close();
            }
        }
    }

    /**
     * A broker against any bus URL (a raw HTTP/2 peer), not started: client id {@code broker-a}, namespace
     * {@link #NAMESPACE}, reconnect backoff 50-100 ms, and whatever {@code more} adds. Its bus connections are
     * tracked: under {@link LeakCheck} its HTTP/2 stream slots and bus connections must be back to 0 after the test.
     */
    public static EventBroker againstPeer(URI busUrl, PublisherView view, CountingMetrics metrics,
                                          UnaryOperator<RelayConfig.Builder> more) {
        RelayConfig config = more.apply(RelayConfig.builder().busUrl(busUrl).caCertificates(() -> List.of(PKI.caCertificate()))
                .credential(() -> Credential.of(CREDENTIAL)).clientId("broker-a").kubernetesNamespace("k")
                .dynamoNamespaces(List.of(NAMESPACE)).reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(100)))
                .build();
        TrackingConnector tracking = new TrackingConnector();
        EventBroker broker = EventBroker.create(config, view, metrics, tracking, RandomGenerator.getDefault());
        LeakCheck.expect("broker HTTP/2 stream slots in use", tracking::streamsInUse, 0);
        LeakCheck.expect("broker bus connections open", tracking::openConnections, 0);
        return broker;
    }

    /** A raw HTTP/2 peer and a started broker against it ({@link #againstPeer}), closed together, the broker first. */
    public record RawPeerBroker(RawH2Peer peer, EventBroker broker, CountingMetrics metrics, MutableView view)
            implements AutoCloseable {
        /** Starts the peer, then the broker against it (synced, empty view; {@code more} adds to the config). */
        public static RawPeerBroker start(UnaryOperator<RelayConfig.Builder> more) throws IOException {
            return start(Map.of(), more);
        }

        /** {@link #start(UnaryOperator)} with the peer's HTTP/2 SETTINGS ({@code id -> value}). */
        public static RawPeerBroker start(Map<Integer, Long> settings, UnaryOperator<RelayConfig.Builder> more)
                throws IOException {
            RawH2Peer peer = RawH2Peer.start(SERVER, settings);
            CountingMetrics metrics = new CountingMetrics();
            MutableView view = new MutableView().synced(true);
            EventBroker broker = againstPeer(peer.busUrl(), view, metrics, more);
            broker.start();
            return new RawPeerBroker(peer, broker, metrics, view);
        }

        /** {@link #start} with loopback publishers allowed and port {@code publisherPort} on 127.0.0.1 advertised. */
        public static RawPeerBroker startAdvertising(int publisherPort) throws IOException {
            RawPeerBroker raw = start(c -> c.allowedCidrs(List.of(Cidr.parse("127.0.0.0/8"))));
            raw.view().advertise(NAMESPACE, "127.0.0.1", publisherPort);
            return raw;
        }

        @Override
        public void close() {
            broker.close();
            peer.close();
        }
    }

    public EventBroker start() {
        broker.start();
        return broker;
    }

    /** Starts the broker and returns the router's side of its first session (welcomed). */
    public RouterSession startSession() {
        start();
        return router.awaitSession(WAIT);
    }

    /** A started broker with one subscription open: the publisher, the router's session, and the stream's two ends. */
    public record Subscribed(LoopbackListener publisher, RouterSession session, Socket upstream, RouterDataStream stream) {
        /**
         * The router announces a drain that lets open streams run for {@code drainMs}, then subscribes bus stream
         * {@code id} to the same publisher; returns the broker's refusal of that subscribe (any other answer fails the test).
         */
        public Frame.StreamRefused drainThenSubscribe(long drainMs, long id) {
            session.send(new Frame.Drain("maintenance", OptionalLong.of(drainMs)));
            session.subscribe(id, NAMESPACE, "127.0.0.1", publisher.port());
            Frame.ClientFrame answer = session.awaitAnswer(id, WAIT);
            if (!(answer instanceof Frame.StreamRefused refused)) {
                throw new AssertionError("a subscribe during a drain was not refused: " + answer);
            }
            return refused;
        }
    }

    /**
     * The set-up most data-path tests share: a publisher, the broker started, its session welcomed, and bus stream
     * {@code id} subscribed to the publisher and open end to end (see {@link #open}).
     */
    public Subscribed startSubscribed(long id) {
        LoopbackListener publisher = publisher();
        RouterSession session = startSession();
        OpenStream stream = open(session, id, publisher);
        return new Subscribed(publisher, session, stream.upstream(), stream.stream());
    }

    /** A subscription opened end to end: the broker's connection to the publisher and the router's data stream. */
    public record OpenStream(long id, Socket upstream, RouterDataStream stream) {
    }

    /**
     * Subscribes bus stream {@code id} to {@code publisher} on {@code session} and waits for every sign that it
     * opened: the broker's connection to the publisher, {@code stream_opened}, and the data stream at the router.
     */
    public OpenStream open(RouterSession session, long id, LoopbackListener publisher) {
        Socket upstream = subscribeAndAwaitOpened(session, id, publisher);
        return new OpenStream(id, upstream, router.awaitDataStream(id, WAIT));
    }

    /**
     * Subscribes bus stream {@code id} to {@code publisher} and waits for the broker's connection to the publisher
     * (returned) and {@code stream_opened}; the data stream at the router is left to the test (a router policy may
     * answer it with 404 or hold its head).
     */
    public static Socket subscribeAndAwaitOpened(RouterSession session, long id, LoopbackListener publisher) {
        session.subscribe(id, NAMESPACE, "127.0.0.1", publisher.port());
        Socket upstream = publisher.awaitConnection();
        Frame.ClientFrame answer = session.awaitAnswer(id, WAIT);
        if (!(answer instanceof Frame.StreamOpened)) {
            throw new AssertionError("stream " + id + " was not opened: " + answer);
        }
        return upstream;
    }

    /**
     * Starts {@code broker.shutdown(drainDeadline)} on a virtual thread and returns that thread, for tests that watch
     * the drain from the router's side while shutdown waits.
     */
    public static Thread shutdownInBackground(EventBroker broker, Duration drainDeadline) {
        return Thread.ofVirtual().name("test-shutdown").start(() -> {
            try {
                broker.shutdown(drainDeadline);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /** Closes {@code c} when the harness closes (after the broker). */
    void closeAtEnd(AutoCloseable c) {
        closeables.add(c);
    }

    /** A loopback publisher the test drives by hand: accepts connections and hands them over. */
    public LoopbackListener publisher() {
        LoopbackListener p = LoopbackListener.open("publisher", 50);
        closeables.add(p);
        view.advertise(NAMESPACE, "127.0.0.1", p.port());
        return p;
    }

    /**
     * A loopback port nothing listens on (a listener opened and closed again), advertised: the broker may dial it, and
     * the dial fails with connection refused.
     */
    public int advertiseClosedPort() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        view.advertise(NAMESPACE, "127.0.0.1", closedPort);
        return closedPort;
    }

    /** The head of {@code queue}, waiting up to {@link #WAIT} for one; none by then fails the test with {@code failure}. */
    public static <T> T takeWithinWait(BlockingQueue<T> queue, String failure) {
        try {
            T head = queue.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            if (head == null) {
                throw new AssertionError(failure);
            }
            return head;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        OPEN.remove(this);
        broker.close();
        for (AutoCloseable c : closeables) {
            try {
                c.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
        router.close();
        if (proxy != null) {
            proxy.close();
        }
    }
}
