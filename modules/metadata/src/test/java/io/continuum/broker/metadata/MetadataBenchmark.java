package io.continuum.broker.metadata;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.continuum.broker.testing.kube.FakeKubeApi;
import io.kubernetes.client.util.Config;

/**
 * Not a test: measures the view for a full namespace (16,384 resources, 65,536 publisher references,
 * the R-META 3 caps) synced from the fake API server with the real client-java, then lookup latency.
 * Run (see docs/metadata.md, "Benchmark"):
 * <pre>
 * ./mvnw -B -ntp -q -pl modules/metadata -am test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=/tmp/metadata-cp.txt -Dmdep.includeScope=test
 * java -Xmx1g -cp modules/metadata/target/test-classes:modules/metadata/target/classes:$(cat /tmp/metadata-cp.txt) \
 *     io.continuum.broker.metadata.MetadataBenchmark
 * </pre>
 */
public final class MetadataBenchmark {
    private MetadataBenchmark() {
    }

    /**
     * Runs the benchmark.
     *
     * @param args unused
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int resources = 16_384;
        int perResource = 4; // 65,536 references in total
        String padding = "\"model_cards\":{\"m\":{\"display_name\":\"" + "x".repeat(1_024) + "\"}},"
                + "\"endpoints\":{\"dynamo/backend/generate/1\":{\"address\":\"10.0.0.1:9000/1/generate\"}},";
        try (FakeKubeApi api = FakeKubeApi.builder().build()) {
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
                            .append(host(r)).append(':').append(5_557 + p).append("\"}}}");
                }
                api.put("bench", "{\"metadata\":{\"name\":\"worker-" + r + "\"},\"spec\":{\"data\":{" + padding
                        + "\"event_channels\":{" + channels + "}}}}");
            }
            long baseline = usedAfterGc();
            long start = System.nanoTime();
            try (MetadataWatcher view = MetadataWatcher.builder()
                    .apiClient(Config.fromConfig(api.kubeconfig().toString()))
                    .namespaces(List.of("bench"))
                    .build()
                    .start()) {
                if (!view.awaitSynced(Duration.ofMinutes(5))) {
                    throw new IllegalStateException("not synced");
                }
                long syncMillis = (System.nanoTime() - start) / 1_000_000;
                long retained = usedAfterGc() - baseline;
                System.out.printf("sync: %d resources, %d references, %d unique publishers in %d ms%n",
                        view.resourceCount(), view.referenceCount(), view.publisherCount(), syncMillis);
                System.out.printf("heap retained by the view after sync (used heap after GC, minus the fake server's"
                        + " data): %.1f MiB (%d bytes per reference)%n", retained / 1048576.0,
                        retained / Math.max(1, view.referenceCount()));

                List<PublisherKey> keys = new ArrayList<>();
                for (int i = 0; i < 4_096; i++) {
                    int r = (i * 7_919) % resources;
                    keys.add(PublisherKey.of("dynamo", host(r), 5_557 + (i % perResource)));   // hit
                    keys.add(PublisherKey.of("dynamo", host(r), 6_000 + (i % perResource)));   // miss
                }
                for (PublisherKey k : keys) {
                    if ((k.port() < 6_000) != (view.check(k) == Advertisement.ADVERTISED)) {
                        throw new IllegalStateException("wrong answer for " + k);
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
                    System.out.printf("check(): round %d, %.1f ns/lookup (50%% hits, %d keys cycled)%n", round,
                            (t1 - t0) / (double) iterations, keys.size());
                }
                System.out.println("(sink " + sink + ")");
            }
        }
    }

    private static String host(int r) {
        return "10.244." + (r / 250) + "." + (r % 250 + 1);
    }

    private static long usedAfterGc() {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return rt.totalMemory() - rt.freeMemory();
    }
}
