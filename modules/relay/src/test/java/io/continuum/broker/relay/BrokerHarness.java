package io.continuum.broker.relay;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;

import io.continuum.broker.relay.target.Connector;
import io.continuum.broker.relay.transport.HelidonBusConnector;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.router.TcpFaultProxy;
import io.continuum.broker.testing.pki.ServerIdentity;

/**
 * A real broker against a real in-process router (TLS with an ephemeral CA, HTTP/2) and real
 * loopback publishers. One per test; {@link #close} tears everything down.
 */
public final class BrokerHarness implements AutoCloseable {
    public static final String CREDENTIAL = "test-credential-0123456789abcdef0123456789";
    public static final String NAMESPACE = "dynamo";
    public static final Duration WAIT = Duration.ofSeconds(20);

    public static final EphemeralPki PKI = EphemeralPki.create();
    public static final ServerIdentity SERVER = PKI.localhostServer();

    public final InProcessRouter router;
    public final MutableView view = new MutableView().synced(true);
    public final CountingMetrics metrics = new CountingMetrics();
    public final EventBroker broker;
    private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();
    /** Every log record of the test, to prove the credential never reaches a log (R-SEC-14). */
    private final CredentialScan credentialScan = CredentialScan.install(CREDENTIAL);

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
                .caBundle(PKI::caPem)
                .credential(() -> CREDENTIAL)
                .clientId("broker-a")
                .kubernetesNamespace("gpu-serving")
                .dynamoNamespaces(List.of(NAMESPACE, "dynamo-canary"))
                .allowedCidrs(List.of("127.0.0.0/8"))
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200))
                .busConnectTimeout(Duration.ofSeconds(10));
        broker = EventBroker.create(config.apply(b).build(), view, metrics, new HelidonBusConnector(),
                RandomGenerator.getDefault(), upstream);
    }

    public EventBroker start() {
        broker.start();
        return broker;
    }

    /** A loopback publisher the test drives by hand: accepts connections and hands them over. */
    public Publisher publisher() {
        try {
            Publisher p = new Publisher(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
            closeables.add(p);
            view.advertise(NAMESPACE, "127.0.0.1", p.port());
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.onSpinWait();
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    @Override
    public void close() {
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
        credentialScan.closeAndAssertClean();
    }

    /** A TCP listener standing in for a ZMQ publisher; the test reads and writes raw bytes. */
    public static final class Publisher implements AutoCloseable {
        private final ServerSocket server;
        private final LinkedBlockingQueue<Socket> accepted = new LinkedBlockingQueue<>();
        private final Thread acceptor;

        public Publisher(ServerSocket server) {
            this.server = server;
            this.acceptor = Thread.ofVirtual().start(() -> {
                try {
                    while (true) {
                        accepted.add(server.accept());
                    }
                } catch (IOException ignored) {
                    // closed
                }
            });
        }

        public int port() {
            return server.getLocalPort();
        }

        public Socket awaitConnection() {
            try {
                Socket s = accepted.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                if (s == null) {
                    throw new AssertionError("the broker did not connect to the publisher");
                }
                return s;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }

        public int pendingConnections() {
            return accepted.size();
        }

        @Override
        public void close() throws IOException {
            server.close();
            acceptor.interrupt();
            for (Socket s : accepted) {
                s.close();
            }
        }
    }
}
