package io.continuum.broker.bench.jmh;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.watch.MetadataWatcher;
import io.continuum.broker.testing.kube.FakeKubeApi;
import io.kubernetes.client.util.Config;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code PublisherView.check} on a real {@code MetadataWatcher} synced from the fake API server with
 * 16,384 resources x 4 channels (65,536 references, the R-META 3 per-namespace cap), as
 * modules/metadata's MetadataBenchmark builds it; keys cycle over 4,096 hits and 4,096 misses.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgs = "-Xmx1g")
public class AdvertisedLookupBench {
    private static final int RESOURCES = 16_384;
    private static final int PER_RESOURCE = 4;

    private FakeKubeApi api;
    private MetadataWatcher view;
    private PublisherKey[] hits;
    private PublisherKey[] misses;
    private int i;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        api = FakeKubeApi.builder().build();
        for (int r = 0; r < RESOURCES; r++) {
            StringBuilder channels = new StringBuilder();
            for (int p = 0; p < PER_RESOURCE; p++) {
                if (p > 0) {
                    channels.append(',');
                }
                channels.append("\"namespace/dynamo/component/backend/topic/kv-events/").append(p)
                        .append("\":{\"type\":\"EventChannel\",\"scope\":{\"kind\":\"component\",")
                        .append("\"namespace\":\"dynamo\",\"component\":\"backend\"},\"topic\":\"kv-events\",")
                        .append("\"transport\":{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"tcp://")
                        .append(host(r)).append(':').append(5_557 + p).append("\"}}}");
            }
            api.put("bench", "{\"metadata\":{\"name\":\"worker-" + r + "\"},\"spec\":{\"data\":{"
                    + "\"event_channels\":{" + channels + "}}}}");
        }
        view = MetadataWatcher.builder()
                .apiClient(Config.fromConfig(api.kubeconfig().toString()))
                .namespaces(List.of("bench"))
                .build()
                .start();
        if (!view.awaitSynced(Duration.ofMinutes(2))) {
            throw new IllegalStateException("not synced");
        }
        List<PublisherKey> h = new ArrayList<>();
        List<PublisherKey> m = new ArrayList<>();
        for (int k = 0; k < 4_096; k++) {
            int r = (k * 7_919) % RESOURCES;
            h.add(PublisherKey.of("dynamo", host(r), 5_557 + (k % PER_RESOURCE)));
            m.add(PublisherKey.of("dynamo", host(r), 6_000 + (k % PER_RESOURCE)));
        }
        hits = h.toArray(PublisherKey[]::new);
        misses = m.toArray(PublisherKey[]::new);
        if (view.check(hits[0]) != Advertisement.ADVERTISED || view.check(misses[0]) != Advertisement.NOT_ADVERTISED) {
            throw new IllegalStateException("wrong answers");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        view.close();
        api.close();
    }

    @Benchmark
    public Advertisement checkHit() {
        return view.check(hits[i++ & 4_095]);
    }

    @Benchmark
    public Advertisement checkMiss() {
        return view.check(misses[i++ & 4_095]);
    }

    private static String host(int r) {
        return "10.244." + (r / 250) + "." + (r % 250 + 1);
    }
}
