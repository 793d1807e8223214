package io.continuum.broker.metadata;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.continuum.broker.metadata.watch.MetadataWatcher;
import io.continuum.broker.testing.kube.FakeKubeApi;
import io.kubernetes.client.util.Config;

/**
 * Not a test: measures the view synced from the fake API server with the real client-java, then lookup
 * latency. Each watched namespace holds 16,384 resources (the R-META 3 cap) with 4 publishers each, each
 * also carrying a 1 KiB model card and a request-plane endpoint. With one namespace that is 65,536
 * references (the total cap); with 4 (the target scale in docs/metadata.md: 4 × 16,384 resources, 4 channels each) the
 * namespaces list concurrently, every resource is parsed and held, and the total cap keeps 65,536 of the
 * 262,144 references (the rest counted {@code total_cap}). Run (see docs/metadata.md, "Benchmark"):
 * <pre>
 * ./mvnw -B -ntp -q -pl modules/metadata -am test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=/tmp/metadata-cp.txt -Dmdep.includeScope=test
 * java -Xmx1g -cp modules/metadata/target/test-classes:modules/metadata/target/classes:$(cat /tmp/metadata-cp.txt) \
 *     io.continuum.broker.metadata.MetadataBenchmark [NAMESPACES]      # 1 by default; 4 for the target scale
 * </pre>
 */
public final class MetadataBenchmark {
    private MetadataBenchmark() {
    }

    /**
     * Runs the benchmark.
     *
     * @param args optional number of watched namespaces (1 to 32, default 1)
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int namespaceCount = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        int resources = 16_384;
        int perResource = 4; // 65,536 references per namespace
        String padding = "\"model_cards\":{\"m\":{\"display_name\":\"" + "x".repeat(1_024) + "\"}},"
                + "\"endpoints\":{\"dynamo/backend/generate/1\":{\"address\":\"10.0.0.1:9000/1/generate\"}},";
        List<String> namespaces = new ArrayList<>();
        for (int n = 0; n < namespaceCount; n++) {
            namespaces.add("bench-" + n);
        }
        try (FakeKubeApi api = FakeKubeApi.builder().build()) {
            for (int n = 0; n < namespaceCount; n++) {
                for (int r = 0; r < resources; r++) {
                    StringBuilder channels = new StringBuilder();
                    for (int p = 0; p < perResource; p++) {
                        if (p > 0) {
                            channels.append(',');
                        }
                        channels.append("\"namespace/dynamo/component/backend/topic/kv-events/").append(p)
                                .append("\":{\"type\":\"EventChannel\",\"scope\":{\"kind\":\"component\",")
                                .append("\"namespace\":\"dynamo\",\"component\":\"backend\"},\"topic\":\"kv-events\",")
                                .append("\"transport\":{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"tcp://")
                                .append(host(n, r)).append(':').append(5_557 + p).append("\"}}}");
                    }
                    api.put(namespaces.get(n), "{\"metadata\":{\"name\":\"worker-" + r + "\"},\"spec\":{\"data\":{"
                            + padding + "\"event_channels\":{" + channels + "}}}}");
                }
            }
            long baseline = usedAfterGc();
            PeakHeap peak = PeakHeap.start(baseline);
            CountingMetrics counted = new CountingMetrics();
            long cpuStart = cpuNanos();
            long start = System.nanoTime();
            try (MetadataWatcher view = MetadataWatcher.builder()
                    .apiClient(Config.fromConfig(api.kubeconfig().toString()))
                    .namespaces(namespaces)
                    .metrics(counted)
                    .build()
                    .start()) {
                if (!view.awaitSynced(Duration.ofMinutes(5))) {
                    throw new IllegalStateException("not synced");
                }
                long syncMillis = (System.nanoTime() - start) / 1_000_000;
                long syncCpuMillis = (cpuNanos() - cpuStart) / 1_000_000;
                long peakAbove = peak.stop();
                long retained = usedAfterGc() - baseline;
                System.out.printf("sync: %d namespace(s), %d resources, %d references held (%d skipped total_cap),"
                                + " %d unique publishers in %d ms (JVM CPU time meanwhile, fake server included: %d ms;"
                        + " load average %s)%n", namespaceCount, view.resourceCount(),
                        view.referenceCount(), counted.skipCount(SkipReason.TOTAL_CAP), view.publisherCount(),
                        syncMillis, syncCpuMillis, loadAverage());
                System.out.printf("heap retained by the view after sync (used heap after GC, minus the fake server's"
                        + " data): %.1f MiB (%d bytes per held resource)%n", retained / 1048576.0,
                        retained / Math.max(1, view.resourceCount()));
                System.out.printf("peak heap used during the sync above the baseline (sampled every 5 ms, garbage"
                        + " included, -Xmx %d MiB, baseline %.1f MiB with the fake server's data): %.1f MiB%n",
                        Runtime.getRuntime().maxMemory() / 1048576, baseline / 1048576.0, peakAbove / 1048576.0);

                List<PublisherKey> keys = new ArrayList<>();
                for (int i = 0; i < 4_096; i++) {
                    int r = (i * 7_919) % resources;
                    keys.add(PublisherKey.of("dynamo", host(0, r), 5_557 + (i % perResource)));   // hit
                    keys.add(PublisherKey.of("dynamo", host(0, r), 6_000 + (i % perResource)));   // miss
                }
                if (namespaceCount == 1) {
                    for (PublisherKey k : keys) {
                        if ((k.port() < 6_000) != (view.check(k) == Advertisement.ADVERTISED)) {
                            throw new IllegalStateException("wrong answer for " + k);
                        }
                    }
                }
                int sink = 0;
                for (int round = 0; round < 5; round++) {
                    int iterations = 20_000_000;
                    long t0 = System.nanoTime();
                    for (int i = 0; i < iterations; i++) {
                        if (view.check(keys.get(i & (keys.size() - 1))) == Advertisement.ADVERTISED) {
                            sink++;
                        }
                    }
                    long t1 = System.nanoTime();
                    System.out.printf("check(): round %d, %.1f ns/lookup (%d keys cycled)%n", round,
                            (t1 - t0) / (double) iterations, keys.size());
                }
                System.out.println("(sink " + sink + ")");
            }
        }
    }

    /** Distinct hosts per namespace, so that the namespaces' publishers do not overlap. */
    private static String host(int namespace, int r) {
        return "10." + (244 - namespace) + "." + (r / 250) + "." + (r % 250 + 1);
    }

    private static long cpuNanos() {
        return ProcessHandle.current().info().totalCpuDuration().orElseThrow().toNanos();
    }

    private static String loadAverage() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).substring(0, 14).strip();
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    private static long usedAfterGc() {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return rt.totalMemory() - rt.freeMemory();
    }

    /** Samples used heap on a platform thread while the sync runs. */
    private static final class PeakHeap {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicLong peak = new AtomicLong();
        private Thread thread;

        static PeakHeap start(long baseline) {
            PeakHeap p = new PeakHeap();
            Runtime rt = Runtime.getRuntime();
            p.thread = Thread.ofPlatform().daemon().name("peak-heap").start(() -> {
                while (p.running.get()) {
                    p.peak.accumulateAndGet(rt.totalMemory() - rt.freeMemory() - baseline, Math::max);
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            return p;
        }

        long stop() throws InterruptedException {
            running.set(false);
            thread.join();
            return peak.get();
        }
    }
}
