package io.continuum.broker.demo;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.continuum.broker.app.cli.Cli;
import io.continuum.broker.app.config.LogFormat;
import io.continuum.broker.app.logging.LoggingSetup;
import io.continuum.broker.app.runtime.RelayRuntime;
import io.continuum.broker.app.runtime.ShutdownSignals;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.bus.RouterDataStream;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.kube.FakeKubeApi;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.ServerIdentity;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.Config;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * {@code continuum-event-broker demo}: the real broker, configured from a real YAML file, against
 * an in-process router (TLS with an ephemeral CA, HTTP/2), an in-process Kubernetes API holding
 * {@code DynamoWorkerMetadata} resources, and real ZMQ publishers. The router subscribes to every
 * advertised publisher and bridges each data stream to a real ZMQ SUB socket; the terminal shows
 * events arriving through the tunnel. Ctrl-C drains and exits.
 */
public final class Demo {
    static final String KUBE_NAMESPACE = "dynamo-demo";
    static final String DYNAMO_NAMESPACE = "dynamo";

    private final int publishers;
    private final int rate;
    private final long stopAfterMessages;
    private final PrintStream out;
    private final Path brokerLauncher;
    private final List<Subscriber> subscribers = new ArrayList<>();

    /**
     * Creates a demo.
     *
     * @param publishers        how many ZMQ publishers (and DynamoWorkerMetadata resources)
     * @param rate              messages per second per publisher
     * @param stopAfterMessages stop by itself once the subscribers got this many messages in total (0: run until Ctrl-C)
     * @param out               where the live view goes
     */
    public Demo(int publishers, int rate, long stopAfterMessages, PrintStream out) {
        this(publishers, rate, stopAfterMessages, out, null);
    }

    /**
     * Creates a demo whose broker is a separate process started by a launcher, such as the runtime image's
     * {@code bin/continuum-event-broker}: the packaged broker meets the same router, API server and publishers.
     *
     * @param publishers        how many ZMQ publishers (and DynamoWorkerMetadata resources)
     * @param rate              messages per second per publisher
     * @param stopAfterMessages stop by itself once the subscribers got this many messages in total (0: run until Ctrl-C)
     * @param out               where the live view goes
     * @param brokerLauncher    the broker's launcher (started with {@code --config FILE} and {@code KUBECONFIG}), or
     *                          {@code null} to run the broker in this process
     */
    public Demo(int publishers, int rate, long stopAfterMessages, PrintStream out, Path brokerLauncher) {
        this.publishers = publishers;
        this.rate = rate;
        this.stopAfterMessages = stopAfterMessages;
        this.out = out;
        this.brokerLauncher = brokerLauncher;
    }

    /**
     * {@code demo [--publishers N] [--rate MSG_PER_S] [--messages N] [--broker-launcher PATH]}.
     *
     * @param args arguments
     * @throws Exception when the demo cannot start
     */
    public static void main(String[] args) throws Exception {
        int publishers = 3;
        int rate = 20;
        long messages = 0;
        Path launcher = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "demo" -> { }
                case "--publishers" -> publishers = Integer.parseInt(args[++i]);
                case "--rate" -> rate = Integer.parseInt(args[++i]);
                case "--messages" -> messages = Long.parseLong(args[++i]);
                case "--broker-launcher" -> launcher = Path.of(args[++i]);
                default -> {
                    System.err.println("usage: continuum-event-broker demo [--publishers N] [--rate MSG_PER_S] [--messages N]"
                            + " [--broker-launcher PATH]");
                    System.exit(2);
                }
            }
        }
        // stderr carries event lines only, from the start: the embedded router's Helidon server logs before the
        // broker configures logging, and would otherwise write JUL's two-line default format.
        LoggingSetup.configure(LogFormat.KEY_VALUE, System.err);
        System.exit(new Demo(publishers, rate, messages, System.out, launcher).run(true));
    }

    /**
     * Runs the demo until Ctrl-C (or until {@code stopAfterMessages} arrived).
     *
     * @param installSignals whether to handle SIGINT/SIGTERM (false in tests)
     * @return the broker's exit status
     * @throws Exception when the demo cannot start
     */
    public int run(boolean installSignals) throws Exception {
        Path dir = Files.createTempDirectory("continuum-demo");
        String credential = HexFormat.of().formatHex(SecureRandom.getInstanceStrong().generateSeed(24));
        EphemeralPki pki = EphemeralPki.create("continuum-demo-ca");
        ServerIdentity server = pki.localhostServer();
        CountDownLatch stop = new CountDownLatch(1);
        AtomicReference<Integer> exit = new AtomicReference<>();
        try (DemoPublishers pubs = new DemoPublishers(publishers, rate);
             FakeKubeApi kube = FakeKubeApi.builder().build();
             InProcessRouter router = InProcessRouter.builder().tls(server.key(), List.of(server.certificate()))
                     .credential(credential).start();
             ZContext zmq = new ZContext()) {
            List<Integer> ports = pubs.ports();
            for (int i = 0; i < ports.size(); i++) {
                kube.put(KUBE_NAMESPACE, DemoMetadata.resource(KUBE_NAMESPACE, i, DYNAMO_NAMESPACE, ports.get(i)));
            }
            Files.write(dir.resolve("ca.pem"), pki.caPem());
            Files.writeString(dir.resolve("credential"), credential + "\n");
            int metricsPort = freePort();
            Path config = dir.resolve("config.yaml");
            Files.writeString(config, String.join("\n",
                    "# Written by the demo; every field is documented in etc/config.event-broker.yaml.example.",
                    "bus_url: " + router.url(),
                    "ca_file: " + dir.resolve("ca.pem"),
                    "client_id: demo-broker",
                    "credential_file: " + dir.resolve("credential"),
                    "kubernetes_namespace: " + KUBE_NAMESPACE,
                    "dynamo_namespaces: [" + DYNAMO_NAMESPACE + "]",
                    "watch_namespaces: [" + KUBE_NAMESPACE + "]",
                    "allowed_cidrs: [127.0.0.0/8]   # the demo's publishers live on loopback",
                    "metrics_listen: 127.0.0.1:" + metricsPort,
                    "drain_deadline: 2s",
                    ""));
            ApiClient apiClient = Config.fromConfig(kube.kubeconfig().toString());

            out.println("continuum-event-broker demo");
            out.println("  router (in-process, TLS/HTTP2): " + router.url());
            out.println("  kubernetes API (in-process):    " + kube.url() + "  namespace " + KUBE_NAMESPACE + ", "
                    + ports.size() + " DynamoWorkerMetadata");
            out.println("  publishers (JeroMQ PUB):        " + ports.stream().map(p -> "127.0.0.1:" + p).toList());
            out.println("  metrics:                        http://127.0.0.1:" + metricsPort + "/metrics   (also /healthz /readyz /statusz)");
            out.println("  config:                         " + config);
            out.println("Ctrl-C drains the broker and exits.");
            out.println();

            Thread broker;
            if (brokerLauncher != null) {
                broker = brokerProcess(config, kube.kubeconfig(), stop, exit);
            } else {
                broker = Thread.ofPlatform().name("broker").start(() -> {
                    Cli cli = Cli.builder()
                            .environment(Map.of())
                            .runtimeFactory(ctx -> new RelayRuntime(ctx, apiClient))
                            .shutdownWait(() -> {
                                stop.await();
                                return 0;
                            })
                            .build();
                    exit.set(cli.run(new String[] {"--config", config.toString()}));
                    stop.countDown();
                });
            }
            if (installSignals) {
                ShutdownSignals signals = ShutdownSignals.install();
                Thread.ofVirtual().start(() -> {
                    try {
                        signals.awaitFirst();
                        out.println();
                        out.println("signal received: draining the broker...");
                        stop.countDown();
                    } catch (InterruptedException ignored) {
                        // exiting
                    }
                });
            }
            Thread routerSide = Thread.ofVirtual().name("demo-router").start(() -> routerSide(router, zmq, ports, stop));
            long started = System.nanoTime();
            while (stop.getCount() > 0) {
                stop.await(1, java.util.concurrent.TimeUnit.SECONDS);
                show(started);
                if (stopAfterMessages > 0 && total() >= stopAfterMessages) {
                    stop.countDown();
                }
            }
            broker.join(Duration.ofSeconds(30));
            routerSide.interrupt();
            show(started);
            out.println("broker exited with status " + exit.get());
            return exit.get() == null ? 1 : exit.get();
        } finally {
            for (Subscriber s : subscribers) {
                s.close();
            }
            try (var files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    /** The router's side: subscribe to every advertised publisher and bridge each stream to a ZMQ SUB. */
    private void routerSide(InProcessRouter router, ZContext zmq, List<Integer> ports, CountDownLatch stop) {
        try {
            RouterSession session = router.awaitSession(Duration.ofSeconds(60));
            out.println("router: broker session " + session.sessionId() + " from client_id "
                    + session.hello().clientId() + ", covering " + session.hello().dynamoNamespaces());
            for (int i = 0; i < ports.size(); i++) {
                long streamId = i + 1;
                session.subscribe(streamId, DYNAMO_NAMESPACE, "127.0.0.1", ports.get(i));
                Frame.ClientFrame answer = session.awaitAnswer(streamId, Duration.ofSeconds(30));
                if (!(answer instanceof Frame.StreamOpened)) {
                    out.println("router: stream " + streamId + " refused: " + answer);
                    continue;
                }
                RouterDataStream stream = router.awaitDataStream(streamId, Duration.ofSeconds(30));
                Subscriber sub = new Subscriber("127.0.0.1:" + ports.get(i), zmq, stream);
                synchronized (subscribers) {
                    subscribers.add(sub);
                }
            }
        } catch (IOException | RuntimeException | AssertionError e) {
            if (stop.getCount() > 0) {
                out.println("router: " + e.getMessage());
            }
        }
    }

    private long total() {
        synchronized (subscribers) {
            return subscribers.stream().mapToLong(s -> s.messages.get()).sum();
        }
    }

    private void show(long startedNanos) {
        double secs = (System.nanoTime() - startedNanos) / 1e9;
        StringBuilder line = new StringBuilder(String.format("[%6.1fs]", secs));
        synchronized (subscribers) {
            if (subscribers.isEmpty()) {
                line.append(" waiting for the broker (metadata sync, session, subscribes)...");
            }
            for (Subscriber s : subscribers) {
                long n = s.messages.get();
                long prev = s.shown;
                s.shown = n;
                line.append(String.format("  %s: %d msgs (+%d/s) last %s", s.publisher, n, n - prev,
                        abbreviate(s.last.get())));
            }
        }
        out.println(line);
    }

    /**
     * Starts the broker as a process of its own and a thread that stops it (SIGTERM, which drains) when the demo
     * stops, or stops the demo when the broker exits by itself. The broker's log lines go to this stderr.
     */
    private Thread brokerProcess(Path config, Path kubeconfig, CountDownLatch stop, AtomicReference<Integer> exit)
            throws IOException {
        ProcessBuilder builder = new ProcessBuilder(brokerLauncher.toString(), "--config", config.toString())
                .redirectOutput(ProcessBuilder.Redirect.INHERIT)
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().remove("KUBERNETES_SERVICE_HOST");
        builder.environment().put("KUBECONFIG", kubeconfig.toString());
        Process process = builder.start();
        out.println("  broker:                         " + brokerLauncher + " (pid " + process.pid() + ")");
        Thread.ofVirtual().name("broker-exit").start(() -> {
            try {
                process.waitFor();
            } catch (InterruptedException ignored) {
                // the demo is exiting
            }
            stop.countDown();
        });
        return Thread.ofPlatform().name("broker").start(() -> {
            try {
                stop.await();
                process.destroy();
                if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
                exit.set(process.waitFor());
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        });
    }

    /** {@code {"event_id":149,"worker_id":0,...}} shown as {@code {"event_id":149,...}}. */
    private static String abbreviate(String s) {
        if (s == null) {
            return "-";
        }
        int comma = s.indexOf(',');
        return comma > 0 ? s.substring(0, comma) + ",...}" : s;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /**
     * A ZMQ SUB on the router side, joined to the data stream by a loopback bridge that dials it (the SUB binds:
     * see {@link RouterDataStream#bridgeTo}).
     */
    private static final class Subscriber implements AutoCloseable {
        final String publisher;
        final AtomicLong messages = new AtomicLong();
        final AtomicReference<String> last = new AtomicReference<>();
        final ZMQ.Socket sub;
        final Socket bridge;
        final Thread reader;
        volatile long shown;

        Subscriber(String publisher, ZContext zmq, RouterDataStream stream) throws IOException {
            this.publisher = publisher;
            this.sub = zmq.createSocket(SocketType.SUB);
            sub.subscribe("kv-events".getBytes(StandardCharsets.UTF_8));
            sub.setReceiveTimeOut(500);
            this.bridge = stream.bridgeTo(sub.bindToRandomPort("tcp://127.0.0.1"));
            this.reader = Thread.ofPlatform().daemon().name("demo-sub-" + publisher).start(this::read);
        }

        private void read() {
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    String topic = sub.recvStr();
                    if (topic == null) {
                        continue;
                    }
                    String body = sub.recvStr();
                    messages.incrementAndGet();
                    last.set(body);
                }
            } catch (RuntimeException e) {
                // context closed
            }
        }

        @Override
        public void close() {
            reader.interrupt();
            try {
                bridge.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }
}
