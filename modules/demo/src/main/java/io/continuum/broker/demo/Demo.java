package io.continuum.broker.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
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
import java.util.concurrent.atomic.AtomicInteger;
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
    private static final Path SETSID = Path.of("/usr/bin/setsid");
    private static final String USAGE = """
            usage: continuum-event-broker demo [--publishers N] [--rate MSG_PER_S] [--messages N]
                                               [--broker-launcher PATH] [--heartbeat-ms MS] [--idle-timeout-ms MS]
              --publishers N          ZMQ publishers, each advertised in a DynamoWorkerMetadata (default 3)
              --rate MSG_PER_S        messages a second from each publisher (default 20)
              --messages N            stop by itself once N messages arrived (default: run until Ctrl-C)
              --broker-launcher PATH  run the broker as a process of its own with this launcher
              --heartbeat-ms MS       heartbeat_interval_ms in the router's welcome (default: left out, 10 s)
              --idle-timeout-ms MS    idle_timeout_ms in the router's welcome (default: left out, 30 s)
            While it runs: r then Enter resets the session from the router's side; Ctrl-C drains and exits.""";

    private final Options options;
    private final PrintStream out;
    /** One feed per publisher, across sessions: what the live view shows. */
    private final List<Feed> feeds = new ArrayList<>();
    /** The data streams of the router's current session, each bridged to a ZMQ SUB. */
    private final List<Subscriber> subscribers = new ArrayList<>();
    private final AtomicReference<RouterSession> currentSession = new AtomicReference<>();

    /**
     * What a demo runs.
     *
     * @param publishers        how many ZMQ publishers (and DynamoWorkerMetadata resources)
     * @param rate              messages per second per publisher
     * @param stopAfterMessages stop by itself once the subscribers got this many messages in total (0: run until Ctrl-C)
     * @param brokerLauncher    the broker's launcher (started with {@code --config FILE} and {@code KUBECONFIG}), or
     *                          {@code null} to run the broker in this process
     * @param heartbeatMs       the {@code heartbeat_interval_ms} the router's welcome names (-1: leave it out, 10 s)
     * @param idleTimeoutMs     the {@code idle_timeout_ms} the router's welcome names (-1: leave it out, 30 s)
     */
    public record Options(int publishers, int rate, long stopAfterMessages, Path brokerLauncher, long heartbeatMs,
                          long idleTimeoutMs) {
        /** The README's demo: three publishers at 20 messages a second, until Ctrl-C, the protocol's default limits. */
        public static final Options DEFAULTS = new Options(3, 20, 0, null, -1, -1);
    }

    /**
     * Creates a demo.
     *
     * @param publishers        how many ZMQ publishers (and DynamoWorkerMetadata resources)
     * @param rate              messages per second per publisher
     * @param stopAfterMessages stop by itself once the subscribers got this many messages in total (0: run until Ctrl-C)
     * @param out               where the live view goes
     */
    public Demo(int publishers, int rate, long stopAfterMessages, PrintStream out) {
        this(new Options(publishers, rate, stopAfterMessages, null, -1, -1), out);
    }

    /**
     * Creates a demo whose broker is a separate process started by a launcher, such as the runtime image's
     * {@code bin/continuum-event-broker}: the packaged broker meets the same router, API server and publishers.
     *
     * @param publishers        how many ZMQ publishers (and DynamoWorkerMetadata resources)
     * @param rate              messages per second per publisher
     * @param stopAfterMessages stop by itself once the subscribers got this many messages in total (0: run until Ctrl-C)
     * @param out               where the live view goes
     * @param brokerLauncher    the broker's launcher, or {@code null} to run the broker in this process
     */
    public Demo(int publishers, int rate, long stopAfterMessages, PrintStream out, Path brokerLauncher) {
        this(new Options(publishers, rate, stopAfterMessages, brokerLauncher, -1, -1), out);
    }

    /**
     * Creates a demo.
     *
     * @param options what it runs
     * @param out     where the live view goes
     */
    public Demo(Options options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    /**
     * {@code demo [--publishers N] [--rate MSG_PER_S] [--messages N] [--broker-launcher PATH] [--heartbeat-ms MS]
     * [--idle-timeout-ms MS]}.
     *
     * @param args arguments
     * @throws Exception when the demo cannot start
     */
    public static void main(String[] args) throws Exception {
        Options d = Options.DEFAULTS;
        int publishers = d.publishers();
        int rate = d.rate();
        long messages = d.stopAfterMessages();
        Path launcher = d.brokerLauncher();
        long heartbeatMs = d.heartbeatMs();
        long idleTimeoutMs = d.idleTimeoutMs();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "demo" -> { }
                case "--publishers" -> publishers = Integer.parseInt(args[++i]);
                case "--rate" -> rate = Integer.parseInt(args[++i]);
                case "--messages" -> messages = Long.parseLong(args[++i]);
                case "--broker-launcher" -> launcher = Path.of(args[++i]);
                case "--heartbeat-ms" -> heartbeatMs = Long.parseLong(args[++i]);
                case "--idle-timeout-ms" -> idleTimeoutMs = Long.parseLong(args[++i]);
                case "--help", "-h" -> {
                    System.out.println(USAGE);
                    System.exit(0);
                }
                default -> {
                    System.err.println(USAGE);
                    System.exit(2);
                }
            }
        }
        // stderr carries event lines only, from the start: the embedded router's Helidon server logs before the
        // broker configures logging, and would otherwise write JUL's two-line default format.
        LoggingSetup.configure(LogFormat.KEY_VALUE, System.err);
        Demo demo = new Demo(new Options(publishers, rate, messages, launcher, heartbeatMs, idleTimeoutMs), System.out);
        System.exit(demo.run(true, System.in));
    }

    /**
     * Runs the demo until {@code stopAfterMessages} arrived (tests: no signal handlers, no commands).
     *
     * @return the broker's exit status
     * @throws Exception when the demo cannot start
     */
    public int run() throws Exception {
        return run(false, null);
    }

    /**
     * Runs the demo until Ctrl-C (or until {@code stopAfterMessages} arrived).
     *
     * @param installSignals whether to handle SIGINT/SIGTERM: during start-up a signal exits at once; once the
     *                       broker runs, the first drains it (as the standalone broker does), a second exits at once
     * @param commands       where the user's commands come from, a line each ({@code r}: the router resets the
     *                       session, so the broker reconnects), or {@code null} for none
     * @return the broker's exit status
     * @throws Exception when the demo cannot start
     */
    public int run(boolean installSignals, InputStream commands) throws Exception {
        Path dir = Files.createTempDirectory("continuum-demo");
        String credential = HexFormat.of().formatHex(SecureRandom.getInstanceStrong().generateSeed(24));
        EphemeralPki pki = EphemeralPki.create("continuum-demo-ca");
        ServerIdentity server = pki.localhostServer();
        CountDownLatch stop = new CountDownLatch(1);
        AtomicReference<Integer> exit = new AtomicReference<>();
        AtomicInteger signal = new AtomicInteger();
        ShutdownSignals signals = installSignals ? ShutdownSignals.install() : null;
        Options o = options;
        try (DemoPublishers pubs = new DemoPublishers(o.publishers(), o.rate());
             FakeKubeApi kube = FakeKubeApi.builder().build();
             InProcessRouter router = InProcessRouter.builder().tls(server.key(), List.of(server.certificate()))
                     .credential(credential)
                     .sessionPolicy(hello -> hello == null ? null
                             : InProcessRouter.SessionAnswer.welcome(o.heartbeatMs(), o.idleTimeoutMs()))
                     .start();
             ZContext zmq = new ZContext()) {
            List<Integer> ports = pubs.ports();
            for (int i = 0; i < ports.size(); i++) {
                kube.put(KUBE_NAMESPACE, DemoMetadata.resource(KUBE_NAMESPACE, i, DYNAMO_NAMESPACE, ports.get(i)));
                feeds.add(new Feed("127.0.0.1:" + ports.get(i)));
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
            if (commands != null) {
                out.println("Enter r to reset the session from the router's side (the broker reconnects, the router"
                        + " subscribes again).");
            }
            out.println("Ctrl-C drains the broker and exits.");
            out.println();

            Thread broker;
            if (o.brokerLauncher() != null) {
                broker = brokerProcess(config, kube.kubeconfig(), stop, exit);
                if (signals != null) {
                    signals.started(); // the broker process drains on the SIGTERM the demo sends it
                }
            } else {
                broker = Thread.ofPlatform().name("broker").start(() -> {
                    // The broker is told when its runtime has started (signals.started()), as the standalone one
                    // is: from then on the first signal drains it instead of exiting at once.
                    Cli cli = Cli.builder()
                            .environment(Map.of())
                            .runtimeFactory(ctx -> new RelayRuntime(ctx, apiClient))
                            .signals(signals)
                            .shutdownWait(() -> {
                                stop.await();
                                return signal.get();
                            })
                            .build();
                    exit.set(cli.run(new String[] {"--config", config.toString()}));
                    stop.countDown();
                });
            }
            if (signals != null) {
                Thread.ofVirtual().start(() -> {
                    try {
                        signal.set(signals.awaitFirst());
                        out.println();
                        out.println("signal received: draining the broker...");
                        stop.countDown();
                    } catch (InterruptedException ignored) {
                        // exiting
                    }
                });
            }
            Thread routerSide = Thread.ofVirtual().name("demo-router").start(() -> routerSide(router, zmq, ports, stop));
            if (commands != null) {
                Thread.ofPlatform().daemon().name("demo-commands").start(() -> commands(commands));
            }
            long started = System.nanoTime();
            while (stop.getCount() > 0) {
                stop.await(1, java.util.concurrent.TimeUnit.SECONDS);
                show(started);
                if (o.stopAfterMessages() > 0 && total() >= o.stopAfterMessages()) {
                    stop.countDown();
                }
            }
            broker.join(Duration.ofSeconds(30));
            routerSide.interrupt();
            show(started);
            out.println("broker exited with status " + exit.get());
            return exit.get() == null ? 1 : exit.get();
        } finally {
            closeSubscribers();
            if (signals != null) {
                signals.close();
            }
            try (var files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    /**
     * The router's side, as a real router behaves: in every session the broker opens (the first one and each after
     * a reconnect), subscribe to every advertised publisher and bridge each stream to a ZMQ SUB. A session's streams
     * end with it; the next session's replace them. Stream ids keep counting across sessions, so a log line names
     * one stream of the whole run.
     */
    private void routerSide(InProcessRouter router, ZContext zmq, List<Integer> ports, CountDownLatch stop) {
        long nextStreamId = 1;
        while (stop.getCount() > 0) {
            RouterSession session;
            try {
                session = router.awaitSession(Duration.ofDays(365)); // interrupted when the demo ends
            } catch (AssertionError e) {
                return;
            }
            closeSubscribers(); // the previous session's streams ended with it
            currentSession.set(session);
            out.println("router: broker session " + session.sessionId() + " from client_id "
                    + session.hello().clientId() + ", covering " + session.hello().dynamoNamespaces());
            try {
                for (int i = 0; i < ports.size(); i++) {
                    long streamId = nextStreamId++;
                    session.subscribe(streamId, DYNAMO_NAMESPACE, "127.0.0.1", ports.get(i));
                    Frame.ClientFrame answer = session.awaitAnswer(streamId, Duration.ofSeconds(30));
                    if (!(answer instanceof Frame.StreamOpened)) {
                        out.println("router: stream " + streamId + " refused: " + answer);
                        continue;
                    }
                    RouterDataStream stream = router.awaitDataStream(streamId, Duration.ofSeconds(30));
                    Subscriber sub = new Subscriber(feeds.get(i), zmq, stream);
                    synchronized (subscribers) {
                        subscribers.add(sub);
                    }
                }
            } catch (IOException | RuntimeException | AssertionError e) {
                // this session ended while the router subscribed; the next one starts over
                if (stop.getCount() > 0) {
                    out.println("router: " + e.getMessage());
                }
            }
        }
    }

    /** Reads the user's commands, a line each, until the input ends. */
    private void commands(InputStream in) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                RouterSession session = currentSession.get();
                if (line.strip().equals("r") && session != null) {
                    out.println("router: resetting session " + session.sessionId());
                    session.reset();
                }
            }
        } catch (IOException ignored) {
            // no more commands
        }
    }

    private void closeSubscribers() {
        synchronized (subscribers) {
            for (Subscriber s : subscribers) {
                s.close();
            }
            subscribers.clear();
        }
    }

    private long total() {
        return feeds.stream().mapToLong(f -> f.messages.get()).sum();
    }

    private void show(long startedNanos) {
        double secs = (System.nanoTime() - startedNanos) / 1e9;
        StringBuilder line = new StringBuilder(String.format("[%6.1fs]", secs));
        if (total() == 0) {
            line.append(" waiting for the broker (metadata sync, session, subscribes)...");
        } else {
            for (Feed f : feeds) {
                long n = f.messages.get();
                long prev = f.shown;
                f.shown = n;
                line.append(String.format("  %s: %d msgs (+%d/s) last %s", f.publisher, n, n - prev,
                        abbreviate(f.last.get())));
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
        List<String> command = new ArrayList<>(List.of(options.brokerLauncher().toString(), "--config",
                config.toString()));
        if (Files.isExecutable(SETSID)) {
            // A session of its own: Ctrl-C in the terminal reaches the demo alone, which then sends the broker one
            // SIGTERM (a drain). Otherwise the broker would get the terminal's SIGINT and then the demo's SIGTERM,
            // a second signal, which exits at once. setsid execs in place (the child leads no process group).
            command.addFirst(SETSID.toString());
        }
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(ProcessBuilder.Redirect.INHERIT)
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().remove("KUBERNETES_SERVICE_HOST");
        builder.environment().put("KUBECONFIG", kubeconfig.toString());
        Process process = builder.start();
        out.println("  broker:                         " + options.brokerLauncher() + " (pid " + process.pid() + ")");
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

    /** What the live view shows of one publisher, over every session of the run. */
    private static final class Feed {
        final String publisher;
        final AtomicLong messages = new AtomicLong();
        final AtomicReference<String> last = new AtomicReference<>();
        volatile long shown;

        Feed(String publisher) {
            this.publisher = publisher;
        }
    }

    /**
     * A ZMQ SUB on the router side for one data stream, joined to it by a loopback bridge that dials it (the SUB
     * binds: see {@link RouterDataStream#bridgeTo}). Its reader thread owns the socket and closes it when it stops.
     */
    private static final class Subscriber implements AutoCloseable {
        final Feed feed;
        final ZContext zmq;
        final ZMQ.Socket sub;
        final Socket bridge;
        final Thread reader;

        Subscriber(Feed feed, ZContext zmq, RouterDataStream stream) throws IOException {
            this.feed = feed;
            this.zmq = zmq;
            this.sub = zmq.createSocket(SocketType.SUB);
            sub.subscribe("kv-events".getBytes(StandardCharsets.UTF_8));
            sub.setReceiveTimeOut(500);
            this.bridge = stream.bridgeTo(sub.bindToRandomPort("tcp://127.0.0.1"));
            this.reader = Thread.ofPlatform().daemon().name("demo-sub-" + feed.publisher).start(this::read);
        }

        private void read() {
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    String topic = sub.recvStr();
                    if (topic == null) {
                        continue;
                    }
                    String body = sub.recvStr();
                    feed.messages.incrementAndGet();
                    feed.last.set(body);
                }
            } catch (RuntimeException e) {
                // context closed
            } finally {
                try {
                    zmq.destroySocket(sub);
                } catch (RuntimeException ignored) {
                    // the context is closing
                }
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
