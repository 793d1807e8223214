package io.continuum.broker.training;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.continuum.broker.protocol.Target;

/**
 * {@code lib/aot-train}'s training run: starts the broker through its launcher with {@code -XX:AOTCacheOutput}, lets
 * it sync the metadata of a loopback API server, welcomes its session on a loopback router, subscribes to every
 * {@link #STREAMS training stream} and relays their loads for a while (so that the cache holds the data path's
 * classes and method profiles, not only the start's: docs/benchmarks.md, item 2 of the tunnel comparison), fetches
 * the metrics server's endpoints, then stops it with SIGTERM, the drain an operator's stop makes. The JVM writes
 * the cache as it exits.
 *
 * <p>It fails, and says why, when the broker does not start, is refused a session, a stream does not carry its load,
 * or the broker does not exit 0 with a cache written: a cache of a broker that did not relay would not be the one
 * this run promises.
 *
 * <pre>java -m io.continuum.broker.training/io.continuum.broker.training.AotTraining
 *     --launcher BIN/continuum-event-broker --output CACHE [--seconds N]</pre>
 */
public final class AotTraining {
    /** The training streams: two streams of messages, one of 4 KiB writes, two echoing one message at a time. */
    static final List<Load> STREAMS = List.of(Load.MESSAGES, Load.MESSAGES, Load.CHUNKS, Load.ECHO, Load.ECHO);
    static final String KUBE_NAMESPACE = "aot-training";
    static final String DYNAMO_NAMESPACE = "aot-training";
    /** How long the relay runs once every stream carried its first bytes. */
    static final Duration DEFAULT_TRAFFIC = Duration.ofSeconds(10);
    private static final Duration START = Duration.ofSeconds(120);
    private static final Duration STREAM_START = Duration.ofSeconds(30);
    /** The JVM forks its cache assembly at exit; on a small machine that takes a while. */
    private static final Duration EXIT = Duration.ofSeconds(300);
    private static final String USAGE = "usage: AotTraining --launcher PATH --output CACHE [--seconds N]";

    /**
     * What a training run did.
     *
     * @param bytesByLoad bytes the broker relayed to the router, per load, in the whole run
     * @param ended       {@code stream_closed} and {@code stream_refused} the broker sent, by code (the drain's
     *                    included)
     * @param sessions    sessions the broker opened
     * @param exitStatus  the broker's exit status
     * @param brokerCpu   the broker's CPU time from the first subscribe to the end of the traffic
     * @param echoes      the {@link Load#ECHO} round trips, timed from the first subscribe
     */
    public record Result(Map<Load, Long> bytesByLoad, Map<String, Long> ended, long sessions, int exitStatus,
                         Duration brokerCpu, RoundTrips echoes) {
    }

    private AotTraining() {
    }

    /**
     * Runs the training and exits 0 when the cache was written.
     *
     * @param args {@code --launcher PATH --output CACHE [--seconds N]}
     */
    public static void main(String[] args) {
        Path launcher = null;
        Path output = null;
        Duration traffic = DEFAULT_TRAFFIC;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--launcher" -> launcher = Path.of(args[++i]);
                    case "--output" -> output = Path.of(args[++i]);
                    case "--seconds" -> traffic = Duration.ofSeconds(Long.parseLong(args[++i]));
                    default -> throw new IllegalArgumentException(args[i]);
                }
            }
        } catch (RuntimeException e) {
            System.err.println(USAGE);
            System.exit(2);
        }
        if (launcher == null || output == null) {
            System.err.println(USAGE);
            System.exit(2);
        }
        try {
            run(launcher, output, traffic, System.out);
            System.out.println("aot-train: the broker drained and exited 0");
            System.exit(0);
        } catch (TrainingFailed e) {
            System.err.println("aot-train: " + e.getMessage());
            System.exit(1);
        } catch (Exception e) {
            System.err.println("aot-train: the training run failed: " + e);
            System.exit(1);
        }
    }

    /** The reason a training run gives up, with the broker's last log lines. */
    public static final class TrainingFailed extends Exception {
        TrainingFailed(String message) {
            super(message);
        }
    }

    /**
     * One training run.
     *
     * @param launcher the broker's launcher ({@code bin/continuum-event-broker})
     * @param cache    where the JVM writes the cache ({@code -XX:AOTCacheOutput}), or null for a run that writes none
     *                 (the launcher then uses the image's cache, if it has one: bench/first-traffic.sh)
     * @param traffic  how long the relay runs once every stream carries its load
     * @param out      progress lines
     * @return what the run did
     * @throws TrainingFailed when the broker did not do what the run needs of it
     * @throws Exception      when a peer could not start
     */
    public static Result run(Path launcher, Path cache, Duration traffic, PrintStream out) throws Exception {
        Path work = Files.createTempDirectory("aot-training");
        List<TrainingPublisher> publishers = new ArrayList<>();
        Process broker = null;
        try {
            TrainingIdentity identity = TrainingIdentity.create(work);
            for (Load load : STREAMS) {
                publishers.add(new TrainingPublisher(load));
            }
            List<Integer> ports = publishers.stream().map(TrainingPublisher::port).toList();
            try (TrainingApiServer api = new TrainingApiServer(KUBE_NAMESPACE, DYNAMO_NAMESPACE, ports);
                 TrainingRouter router = new TrainingRouter(identity.server())) {
                int metricsPort = freePort();
                Path config = writeConfig(work, router.url(), identity.caPem(), metricsPort);
                Path kubeconfig = writeKubeconfig(work, api.url());
                Path log = work.resolve("broker.log");
                ProcessBuilder builder = new ProcessBuilder(launcher.toString(), "--config", config.toString())
                        .redirectErrorStream(true).redirectOutput(log.toFile());
                builder.environment().remove("KUBERNETES_SERVICE_HOST");
                builder.environment().put("KUBECONFIG", kubeconfig.toString());
                if (cache != null) {
                    String javaOptions = builder.environment().getOrDefault("CONTINUUM_EVENT_BROKER_JAVA_OPTS", "");
                    builder.environment().put("CONTINUUM_EVENT_BROKER_JAVA_OPTS",
                            (javaOptions + " -XX:AOTCacheOutput=" + cache).strip());
                }
                broker = builder.start();
                out.println("aot-train: broker pid " + broker.pid() + ", router " + router.url() + ", API server "
                        + api.url() + ", " + STREAMS.size() + " publishers");
                long startDeadline = System.nanoTime() + START.toNanos();
                while (!router.awaitSession(Duration.ofMillis(100))) {
                    if (!broker.isAlive()) {
                        throw failed("the broker exited with status " + broker.exitValue()
                                + " before it opened a session", log);
                    }
                    if (System.nanoTime() > startDeadline) {
                        throw failed("the broker opened no session within " + START.toSeconds() + " s", log);
                    }
                }
                List<Target.ZmqTcp> targets = ports.stream()
                        .map(p -> new Target.ZmqTcp(DYNAMO_NAMESPACE, "127.0.0.1", p)).toList();
                List<TrainingRouter.Stream> current = new ArrayList<>();
                List<TrainingRouter.Stream> all = new ArrayList<>();
                long busId = 0;
                long epoch = System.nanoTime();
                Duration cpuAtEpoch = cpu(broker);
                for (int i = 0; i < STREAMS.size(); i++) {
                    current.add(router.subscribe(++busId, targets.get(i), STREAMS.get(i), epoch));
                }
                all.addAll(current);
                awaitLoads(current, log);
                long deadline = System.nanoTime() + traffic.toNanos();
                while (System.nanoTime() < deadline) {
                    for (String path : List.of("/healthz", "/readyz", "/metrics", "/statusz")) {
                        get(metricsPort, path);
                    }
                    for (int i = 0; i < current.size(); i++) {
                        if (current.get(i).ended) { // a router subscribes again to a stream the broker ended
                            current.set(i, router.subscribe(++busId, targets.get(i), STREAMS.get(i), epoch));
                            all.add(current.get(i));
                        }
                    }
                    Thread.sleep(Math.min(1_000, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
                }
                Duration brokerCpu = cpu(broker).minus(cpuAtEpoch);
                Map<Load, Long> bytes = new EnumMap<>(Load.class);
                RoundTrips echoes = new RoundTrips();
                for (TrainingRouter.Stream s : all) {
                    bytes.merge(s.load, s.bytes(), Long::sum);
                    echoes.addAll(s.roundTrips);
                }
                out.println("aot-train: stopping the broker (SIGTERM, a drain); it relayed " + summary(
                        new Result(bytes, router.endedByCode(), router.sessions(), 0, brokerCpu, echoes)));
                broker.destroy();
                if (!broker.waitFor(EXIT.toSeconds(), TimeUnit.SECONDS)) {
                    throw failed("the broker did not exit within " + EXIT.toSeconds() + " s of SIGTERM", log);
                }
                int status = broker.exitValue();
                if (status != 0) {
                    throw failed("the broker exited with status " + status, log);
                }
                if (cache != null && (!Files.isRegularFile(cache) || Files.size(cache) == 0)) {
                    throw failed("the broker exited 0 but wrote no cache to " + cache, log);
                }
                return new Result(bytes, router.endedByCode(), router.sessions(), status, brokerCpu, echoes);
            }
        } finally {
            if (broker != null && broker.isAlive()) {
                broker.destroyForcibly();
            }
            for (TrainingPublisher p : publishers) {
                p.close();
            }
            deleteTree(work);
        }
    }

    /** Waits until every stream opened and carried its first bytes; a stream the broker refused or closed fails. */
    private static void awaitLoads(List<TrainingRouter.Stream> streams, Path log) throws Exception {
        long deadline = System.nanoTime() + STREAM_START.toNanos();
        for (TrainingRouter.Stream s : streams) {
            while (s.bytes() == 0 && !s.ended && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            if (s.bytes() == 0) {
                throw failed("training stream " + s.busId + " (" + s.load + ") carried nothing within "
                        + STREAM_START.toSeconds() + " s" + (s.ended ? ": the broker ended it" : ""), log);
            }
        }
    }

    static String summary(Result r) {
        StringBuilder s = new StringBuilder();
        r.bytesByLoad().forEach((load, bytes) -> s.append(s.isEmpty() ? "" : ", ").append(String.format(
                "%.1f MiB of %s (%d x %d B)", bytes / 1048576.0, load.name().toLowerCase(java.util.Locale.ROOT),
                bytes / load.bytes(), load.bytes())));
        s.append(" over ").append(STREAMS.size()).append(" streams in ").append(r.sessions()).append(" session")
                .append(r.sessions() == 1 ? "" : "s");
        long[] echoes = r.echoes().all();
        s.append(String.format("; echo round trip p50 %d us, p99 %d us (%d); broker CPU %.1f s",
                RoundTrips.quantile(echoes, 0.5) / 1_000, RoundTrips.quantile(echoes, 0.99) / 1_000, echoes.length,
                r.brokerCpu().toMillis() / 1_000.0));
        if (!r.ended().isEmpty()) {
            s.append("; streams ended by the broker: ").append(r.ended());
        }
        return s.toString();
    }

    /** The broker's CPU time so far (the launcher execs the JVM, so the child is the broker's JVM). */
    private static Duration cpu(Process broker) {
        return broker.info().totalCpuDuration().orElse(Duration.ZERO);
    }

    private static TrainingFailed failed(String why, Path log) {
        String tail = "";
        try (Stream<String> lines = Files.lines(log)) {
            List<String> all = lines.toList();
            tail = String.join("\n    ", all.subList(Math.max(0, all.size() - 15), all.size()));
        } catch (IOException | java.io.UncheckedIOException e) {
            // no log
        }
        return new TrainingFailed(why + (tail.isEmpty() ? "" : "; the broker's last lines:\n    " + tail));
    }

    private static Path writeConfig(Path work, String busUrl, Path caPem, int metricsPort) throws IOException {
        byte[] secret = new byte[24];
        new SecureRandom().nextBytes(secret);
        Path credential = work.resolve("credential");
        Files.writeString(credential, HexFormat.of().formatHex(secret) + "\n");
        if (FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
            Files.setPosixFilePermissions(credential, PosixFilePermissions.fromString("rw-------"));
        }
        Path config = work.resolve("config.yaml");
        Files.writeString(config, String.join("\n",
                "# Written by lib/aot-train for one training run on loopback.",
                "bus_url: " + busUrl,
                "ca_file: " + caPem,
                "client_id: aot-training",
                "credential_file: " + credential,
                "kubernetes_namespace: " + KUBE_NAMESPACE,
                "dynamo_namespaces: [" + DYNAMO_NAMESPACE + "]",
                "watch_namespaces: [" + KUBE_NAMESPACE + "]",
                "allowed_cidrs: [127.0.0.0/8]   # the training publishers live on loopback",
                "metrics_listen: 127.0.0.1:" + metricsPort,
                "drain_deadline: 2s",
                ""));
        return config;
    }

    private static Path writeKubeconfig(Path work, String server) throws IOException {
        Path file = work.resolve("kubeconfig");
        Files.writeString(file, """
                apiVersion: v1
                kind: Config
                clusters: [{name: training, cluster: {server: "%s"}}]
                users: [{name: training, user: {token: training}}]
                contexts: [{name: training, context: {cluster: training, user: training, namespace: %s}}]
                current-context: training
                """.formatted(server, KUBE_NAMESPACE));
        return file;
    }

    /** A GET on the metrics server, answer discarded: its handlers belong in the cache too. */
    private static void get(int port, String path) {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(5_000);
            OutputStream o = s.getOutputStream();
            o.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            o.flush();
            InputStream in = s.getInputStream();
            in.transferTo(OutputStream.nullOutputStream());
        } catch (IOException e) {
            // not up yet, or busy: the next round asks again
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
