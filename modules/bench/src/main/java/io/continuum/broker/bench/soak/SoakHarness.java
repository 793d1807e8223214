package io.continuum.broker.bench.soak;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.continuum.broker.testing.kube.FakeKubeApi;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.ServerIdentity;

/**
 * The soak (docs/reliability.md, "Soak"): the production launcher ({@code bin/continuum-event-broker}) in
 * its own process, against an in-process router, Kubernetes API and publishers, for a long time, under
 * faults: publishers come and go (their resources with them), the API server drops watches and forgets
 * its history, the router drains for rebalances and restarts. Every minute it samples the broker process:
 * open file descriptors, OS threads, all Java threads (virtual included, from a JSON thread dump), heap used
 * after a full GC, RSS, and its own metrics. At the end it withdraws every publisher, waits for the broker
 * to close every stream, and compares the quiet process with the quiet baseline taken before the first
 * subscription: leaked sockets or threads show up there.
 *
 * <p>System properties: {@code soak.minutes} (35), {@code soak.publishers} (16), {@code soak.rate} (msg/s
 * per stream, 50), {@code soak.sampleSeconds} (60), {@code soak.launcher}
 * ({@code bin/continuum-event-broker}), {@code soak.out} ({@code modules/bench/target/soak.md}),
 * {@code soak.faultScale} (1: every fault interval as written; 0.1 for a quick shake-down), {@code soak.stallSeconds}
 * (0: the router never stops reading) and {@code soak.stallAfterSeconds} (60), for memory at max_streams. Environment:
 * {@code SOAK_BROKER_JAVA_OPTS}, the broker's JVM options ({@code -Xmx256m -XX:+UseSerialGC}).
 */
public final class SoakHarness {
    static final String DYNAMO_NAMESPACE = "dynamo";
    private static final String KUBE_NAMESPACE = "soak";

    /** A generation's line of GC.heap_info: "garbage-first heap ... used NK", "DefNew ... used NK", "Tenured ...". */
    private static final Pattern HEAP_USED = Pattern.compile("(?m)^\\S[^\\n]*?, used (\\d+)K");

    private final int minutes = Integer.getInteger("soak.minutes", 35);
    private final int publisherCount = Integer.getInteger("soak.publishers", 16);
    private final int rate = Integer.getInteger("soak.rate", 50);
    private final int sampleSeconds = Integer.getInteger("soak.sampleSeconds", 60);
    /** Shrinks every fault interval (0.1: ten times as many faults), for a quick shake-down run. */
    private final double faultScale = Double.parseDouble(System.getProperty("soak.faultScale", "1"));
    /**
     * Memory at max_streams (docs/benchmarks.md): when positive, the router stops reading every data stream
     * {@code soak.stallAfterSeconds} (60) into the run, for this many seconds, so the broker's buffers toward it
     * fill to the session budget while every stream stays open; the samples in the stall show the worst case.
     */
    private final int stallSeconds = Integer.getInteger("soak.stallSeconds", 0);
    private final int stallAfterSeconds = Integer.getInteger("soak.stallAfterSeconds", 60);
    private final Path launcher = Path.of(System.getProperty("soak.launcher", "bin/continuum-event-broker"));
    private final Path out = Path.of(System.getProperty("soak.out", "modules/bench/target/soak.md"));
    /** The broker's JVM options (its CONTINUUM_EVENT_BROKER_JAVA_OPTS), e.g. to soak another collector. */
    private final String brokerJavaOpts = Objects.requireNonNullElse(System.getenv("SOAK_BROKER_JAVA_OPTS"),
            "-Xmx256m -XX:+UseSerialGC"); // the collector of jvm.options

    private final Random random = new Random(20261129);
    private final HttpClient http = HttpClient.newHttpClient();
    private final Map<Integer, SoakPublisher> publishers = new ConcurrentHashMap<>();
    private final Set<Integer> advertised = ConcurrentHashMap.newKeySet();
    private final Map<String, Long> events = new ConcurrentHashMap<>();
    private final List<Sample> samples = new ArrayList<>();
    private int workerSeq;

    private SoakHarness() {
    }

    /**
     * Runs the soak.
     *
     * @param args none
     * @throws Exception when the set-up fails
     */
    public static void main(String[] args) throws Exception {
        System.exit(new SoakHarness().run());
    }

    private int run() throws Exception {
        Path dir = Files.createTempDirectory("continuum-soak");
        String credential = HexFormat.of().formatHex(SecureRandom.getInstanceStrong().generateSeed(24));
        EphemeralPki pki = EphemeralPki.create("continuum-soak-ca");
        ServerIdentity server = pki.localhostServer();
        Files.write(dir.resolve("ca.pem"), pki.caPem());
        Files.writeString(dir.resolve("credential"), credential + "\n");
        int metricsPort;
        try (var s = new java.net.ServerSocket(0)) {
            metricsPort = s.getLocalPort();
        }
        URI metrics = URI.create("http://127.0.0.1:" + metricsPort + "/metrics");
        try (FakeKubeApi kube = FakeKubeApi.builder().build();
             RouterDriver router = new RouterDriver(server.key(), List.of(server.certificate()), credential,
                     advertised)) {
            Path config = dir.resolve("config.yaml");
            Files.writeString(config, String.join("\n",
                    "bus_url: " + router.url(),
                    "ca_file: " + dir.resolve("ca.pem"),
                    "client_id: soak-broker",
                    "credential_file: " + dir.resolve("credential"),
                    "kubernetes_namespace: " + KUBE_NAMESPACE,
                    "dynamo_namespaces: [" + DYNAMO_NAMESPACE + "]",
                    "watch_namespaces: [" + KUBE_NAMESPACE + "]",
                    "allowed_cidrs: [127.0.0.0/8]",
                    "metrics_listen: 127.0.0.1:" + metricsPort,
                    "drain_deadline: 5s",
                    "reconnect_backoff:",
                    "  initial: 500ms",
                    "  max: 5s",
                    ""));
            ProcessBuilder pb = new ProcessBuilder(launcher.toString(), "--config", config.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("broker.log").toFile());
            pb.environment().put("KUBECONFIG", kube.kubeconfig().toString());
            pb.environment().put("CONTINUUM_EVENT_BROKER_JAVA_OPTS", brokerJavaOpts);
            Process broker = pb.start();
            long pid = broker.pid();
            System.out.printf(Locale.ROOT, "soak: %d min, %d publishers at %d msg/s, broker pid %d, log %s%n",
                    minutes, publisherCount, rate, pid, dir.resolve("broker.log"));
            try {
                awaitMetric(metrics, "continuum_event_broker_session_connected", 1, Duration.ofSeconds(60));
                Sample baseline = sample(pid, metrics, router, Duration.ZERO, dir.resolve("threads-baseline.json"));
                System.out.println("baseline (welcomed, no streams): " + baseline);

                for (int i = 0; i < publisherCount; i++) {
                    addPublisher(kube);
                }
                long start = System.nanoTime();
                long end = start + TimeUnit.MINUTES.toNanos(minutes);
                long nextSample = start + TimeUnit.SECONDS.toNanos(sampleSeconds);
                long nextChurn = start + every(TimeUnit.SECONDS.toNanos(15));
                long nextDropWatch = start + every(TimeUnit.MINUTES.toNanos(2));
                long nextCompact = start + every(TimeUnit.MINUTES.toNanos(7));
                long nextRebalance = start + every(TimeUnit.MINUTES.toNanos(4));
                long nextRestart = start + every(TimeUnit.MINUTES.toNanos(6));
                long stallAt = stallSeconds > 0 ? start + TimeUnit.SECONDS.toNanos(stallAfterSeconds) : Long.MAX_VALUE;
                while (System.nanoTime() < end) {
                    if (!broker.isAlive()) {
                        System.out.println("FAIL: the broker exited with " + broker.exitValue());
                        return 1;
                    }
                    long now = System.nanoTime();
                    if (now >= nextChurn) {
                        replaceRandomPublisher(kube);
                        nextChurn += every(TimeUnit.SECONDS.toNanos(15));
                    }
                    if (now >= nextDropWatch) {
                        kube.dropWatches();
                        count("watch dropped");
                        nextDropWatch += every(TimeUnit.MINUTES.toNanos(2));
                    }
                    if (now >= nextCompact) {
                        kube.compact();
                        kube.dropWatches();
                        count("API history compacted + watch dropped (410, relist)");
                        nextCompact += every(TimeUnit.MINUTES.toNanos(7));
                    }
                    if (now >= nextRebalance) {
                        router.rebalance(Duration.ofSeconds(2));
                        count("router drain rebalance");
                        nextRebalance += every(TimeUnit.MINUTES.toNanos(4));
                    }
                    if (now >= nextRestart) {
                        router.restart(Duration.ofSeconds(3));
                        count("router restart (3 s down)");
                        nextRestart += every(TimeUnit.MINUTES.toNanos(6));
                    }
                    if (now >= stallAt) {
                        router.stallReading(Duration.ofSeconds(stallSeconds));
                        count("router stopped reading for " + stallSeconds + " s");
                        stallAt = Long.MAX_VALUE;
                    }
                    if (now >= nextSample) {
                        Sample s = sample(pid, metrics, router, Duration.ofNanos(now - start));
                        samples.add(s);
                        System.out.println(s);
                        nextSample += TimeUnit.SECONDS.toNanos(sampleSeconds);
                    }
                    Thread.sleep(250); // the scheduler's tick; nothing waits on a condition here
                }

                // Quiesce: every publisher withdrawn; the broker revokes every stream; compare with the baseline.
                for (Integer port : List.copyOf(publishers.keySet())) {
                    removePublisher(kube, port);
                }
                awaitMetric(metrics, "continuum_event_broker_open_streams", 0, Duration.ofSeconds(60));
                awaitMetric(metrics, "continuum_event_broker_session_connected", 1, Duration.ofSeconds(60));
                // Streams end at once, but a stream that ended with upstream_closed keeps its HTTP/2 stream up to
                // 1 s for the router to finish its side (docs/protocol.md 8.1); give the process time to settle.
                Sample quiet = null;
                long settle = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                do {
                    if (quiet != null) {
                        Thread.sleep(2000);
                    }
                    quiet = sample(pid, metrics, router, Duration.ofNanos(System.nanoTime() - start),
                            dir.resolve("threads-quiet.json"));
                } while (quiet.javaThreads() > baseline.javaThreads() + 2 && System.nanoTime() < settle);
                System.out.println("quiet (every publisher withdrawn): " + quiet);
                System.out.println("broker peak RSS (VmHWM): " + procField(Files.readString(
                        Path.of("/proc/" + pid + "/status")), "VmHWM") / 1024 + " MiB");
                return report(baseline, quiet, router);
            } finally {
                broker.destroy(); // SIGTERM: the broker drains and exits
                if (!broker.waitFor(30, TimeUnit.SECONDS)) {
                    broker.destroyForcibly();
                }
                System.out.println("broker exit status after SIGTERM: " + broker.exitValue());
                publishers.values().forEach(SoakPublisher::close);
            }
        }
    }

    private long every(long nanos) {
        return (long) (nanos * faultScale);
    }

    private void count(String event) {
        events.merge(event, 1L, Long::sum);
    }

    private void addPublisher(FakeKubeApi kube) throws IOException {
        SoakPublisher p = new SoakPublisher(rate);
        int worker = workerSeq++;
        publishers.put(p.port(), p);
        kube.put(KUBE_NAMESPACE, resource(worker, p.port()));
        advertised.add(p.port());
    }

    private void removePublisher(FakeKubeApi kube, int port) {
        SoakPublisher p = publishers.remove(port);
        advertised.remove(port);
        kube.delete(KUBE_NAMESPACE, "worker-" + port);
        if (p != null) {
            p.close();
        }
    }

    private void replaceRandomPublisher(FakeKubeApi kube) throws IOException {
        List<Integer> ports = List.copyOf(publishers.keySet());
        if (!ports.isEmpty()) {
            int port = ports.get(random.nextInt(ports.size()));
            if (random.nextBoolean()) {
                // the publisher dies first, its resource goes later (pod crash, then the operator cleans up)
                publishers.get(port).close();
                count("publisher crashed, then withdrawn");
            } else {
                count("publisher withdrawn, then stopped");
            }
            removePublisher(kube, port);
        }
        addPublisher(kube);
    }

    private static String resource(int worker, int port) {
        String name = "worker-" + port;
        return "{\"apiVersion\":\"nvidia.com/v1alpha1\",\"kind\":\"DynamoWorkerMetadata\","
                + "\"metadata\":{\"name\":\"" + name + "\",\"namespace\":\"" + KUBE_NAMESPACE + "\"},"
                + "\"spec\":{\"data\":{\"endpoints\":{\"" + DYNAMO_NAMESPACE + "/backend/generate\":\"10.0.0.1:8000/"
                + worker + "/generate\"},\"event_channels\":{\"" + DYNAMO_NAMESPACE + "/backend/kv-events/" + worker
                + "\":{\"type\":\"EventChannel\",\"namespace\":\"" + DYNAMO_NAMESPACE + "\",\"component\":\"backend\","
                + "\"topic\":\"kv-events\",\"instance_id\":" + worker + ",\"transport\":{\"kind\":\"Zmq\","
                + "\"config\":{\"endpoint\":\"tcp://127.0.0.1:" + port + "\"}}}}}}}";
    }

    /** One minute's look at the broker process. */
    record Sample(Duration at, long fds, long osThreads, long javaThreads, long heapAfterGcKiB, long rssKiB,
                  long openStreams, long bufferedBytes, long sessionEnds, long reconnects, long watchRestarts,
                  long relayedToRouter, long records, long gaps) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "t=%5.1fmin fds=%d os_threads=%d java_threads=%d heap_after_gc=%.1fMiB"
                            + " rss=%.1fMiB open_streams=%d buffered=%d session_ends=%d reconnects=%d watch_restarts=%d"
                            + " relayed_to_router=%.1fMiB records_verified=%d gaps=%d",
                    at.toMillis() / 60_000.0, fds, osThreads, javaThreads, heapAfterGcKiB / 1024.0, rssKiB / 1024.0,
                    openStreams, bufferedBytes, sessionEnds, reconnects, watchRestarts,
                    relayedToRouter / 1048576.0, records, gaps);
        }

        String row() {
            return String.format(Locale.ROOT, "| %.0f | %d | %d | %d | %.1f | %.1f | %d | %d | %d | %d | %.1f | %d | %d |",
                    at.toMillis() / 60_000.0, fds, osThreads, javaThreads, heapAfterGcKiB / 1024.0, rssKiB / 1024.0,
                    openStreams, sessionEnds, reconnects, watchRestarts, relayedToRouter / 1048576.0, records, gaps);
        }
    }

    private Sample sample(long pid, URI metrics, RouterDriver router, Duration at) throws Exception {
        return sample(pid, metrics, router, at, null);
    }

    private Sample sample(long pid, URI metrics, RouterDriver router, Duration at, Path keepDump) throws Exception {
        long fds;
        try (var list = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            fds = list.count();
        }
        String status = Files.readString(Path.of("/proc/" + pid + "/status"));
        long osThreads = procField(status, "Threads");
        long rss = procField(status, "VmRSS");
        jcmd(pid, "GC.run");
        String heap = jcmd(pid, "GC.heap_info");
        // Every generation's line (G1: one "garbage-first heap"; Serial: "DefNew" and "Tenured"; Parallel: two),
        // not the indented space and Metaspace lines
        Matcher m = HEAP_USED.matcher(heap);
        long heapKiB = m.find() ? 0 : -1;
        for (m.reset(); m.find(); ) {
            heapKiB += Long.parseLong(m.group(1));
        }
        Path dump = Files.createTempFile("soak-threads", ".json");
        Files.delete(dump);
        jcmd(pid, "Thread.dump_to_file", "-format=json", dump.toString());
        long javaThreads = Pattern.compile("\"tid\"").matcher(Files.readString(dump)).results().count();
        if (keepDump != null) {
            Files.move(dump, keepDump, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        Files.deleteIfExists(dump);
        String text = scrape(metrics);
        return new Sample(at, fds, osThreads, javaThreads, heapKiB, rss,
                metric(text, "continuum_event_broker_open_streams"),
                metric(text, "continuum_event_broker_buffered_bytes"),
                metric(text, "continuum_event_broker_session_ends_total"),
                metric(text, "continuum_event_broker_reconnects_total"),
                metric(text, "continuum_event_broker_metadata_watch_restarts_total"),
                metricLabelled(text, "continuum_event_broker_relayed_bytes_total", "upstream_to_router"),
                router.recordsVerified.get(), router.gaps.get());
    }

    private static long procField(String status, String field) {
        Matcher m = Pattern.compile("(?m)^" + field + ":\\s+(\\d+)").matcher(status);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    private static String jcmd(long pid, String... command) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString());
        cmd.add(Long.toString(pid));
        cmd.addAll(List.of(command));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return output;
    }

    private String scrape(URI metrics) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    /** Sum of every series of a family (all label sets). */
    private static long metric(String text, String family) {
        double sum = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith(family + "{") || line.startsWith(family + " ")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return (long) sum;
    }

    private static long metricLabelled(String text, String family, String labelValue) {
        for (String line : text.split("\n")) {
            if (line.startsWith(family + "{") && line.contains("\"" + labelValue + "\"")) {
                return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return -1;
    }

    private void awaitMetric(URI metrics, String family, long value, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                if (metric(scrape(metrics), family) == value) {
                    return;
                }
            } catch (IOException notUpYet) {
                // the metrics server is not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(family + " did not reach " + value + " within " + timeout);
            }
            Thread.sleep(200); // polling another process's metrics: there is nothing to wait on
        }
    }

    private int report(Sample baseline, Sample quiet, RouterDriver router) throws IOException {
        StringBuilder md = new StringBuilder();
        md.append("Soak run ").append(Instant.now()).append(": ").append(minutes).append(" min, ")
                .append(publisherCount).append(" publishers at ").append(rate).append(" msg/s (64 B records), ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores\n\n");
        md.append("| min | fds | OS threads | Java threads (virtual incl.) | heap after GC MiB | RSS MiB | open streams"
                + " | session ends | reconnects | watch restarts | relayed to router MiB | records verified | gaps |\n");
        md.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        md.append(baseline.row()).append(" (baseline: welcomed, no streams)\n");
        for (Sample s : samples) {
            md.append(s.row()).append('\n');
        }
        md.append(quiet.row()).append(" (quiet: every publisher withdrawn)\n\n");
        md.append("Faults injected:\n\n");
        events.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> md.append("- ").append(e.getKey()).append(": ").append(e.getValue()).append('\n'));
        md.append("\nRouter side: ").append(router.sessions.get()).append(" sessions, ")
                .append(router.streamsOpened.get()).append(" streams opened, refusals ").append(router.refusals)
                .append(", closes ").append(router.closes).append(", ").append(router.recordsVerified.get())
                .append(" records verified in order, ").append(router.gaps.get()).append(" gaps\n");
        boolean fdsFlat = quiet.fds() <= baseline.fds() + 2;
        boolean threadsFlat = quiet.javaThreads() <= baseline.javaThreads() + 2;
        boolean noGaps = router.gaps.get() == 0;
        md.append(String.format(Locale.ROOT, "%nQuiet vs baseline: fds %d → %d (%s), Java threads %d → %d (%s),"
                        + " heap after GC %.1f → %.1f MiB; gaps %d (%s)%n",
                baseline.fds(), quiet.fds(), fdsFlat ? "flat" : "LEAK?", baseline.javaThreads(), quiet.javaThreads(),
                threadsFlat ? "flat" : "LEAK?", baseline.heapAfterGcKiB() / 1024.0, quiet.heapAfterGcKiB() / 1024.0,
                router.gaps.get(), noGaps ? "none lost" : "LOSS"));
        Files.createDirectories(out.getParent());
        Files.writeString(out, md);
        System.out.println();
        System.out.println(md);
        System.out.println("written to " + out);
        return fdsFlat && threadsFlat && noGaps ? 0 : 1;
    }
}
