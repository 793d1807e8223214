package io.continuum.broker.app.observe;

import io.continuum.broker.metadata.RestartReason;
import io.continuum.broker.metadata.SkipReason;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.api.RelayMetrics.Direction;
import io.continuum.broker.relay.api.RelayMetrics.DialOutcome;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import io.continuum.broker.app.config.ListenAddress;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.EndReason;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import io.continuum.broker.relay.api.SessionState;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * R-MET: every metric of the table with its exact name and label set, every label value
 * pre-registered at zero, typed updates, and a valid Prometheus exposition (promtool); the operations
 * additions (histograms, router errors, build info, timestamps) and the JVM and process meters.
 */
class BrokerMetricsTest {
    private static final String P = "continuum_event_broker_";
    private static final Set<String> CODES = Set.of(
            "unsupported_target", "target_not_advertised", "target_not_allowed", "upstream_connect_failed",
            "too_many_streams", "duplicate_stream", "draining", "idle_timeout", "upstream_closed",
            "buffer_overflow", "unknown_stream", "protocol_error", "unauthorized", "unsupported_version",
            "superseded", "internal_error", "unknown");
    private static final Set<String> END_REASONS = Set.of(
            "shutdown", "drained", "refused", "idle_timeout", "terminal_error", "router_closed",
            "connect_failed", "connection_lost", "protocol_error");

    /** R-MET table: family name (as exposed) -> label key -> every label value. */
    private static final Map<String, Map<String, Set<String>>> R_MET = new TreeMap<>(Map.ofEntries(
            Map.entry(P + "session_connected", Map.of()),
            Map.entry(P + "session_attempts_total", Map.of("result", Set.of("welcomed", "refused", "failed"))),
            Map.entry(P + "session_ends_total", Map.of("reason", END_REASONS)),
            Map.entry(P + "reconnects_total", Map.of()),
            Map.entry(P + "subscribes_total", Map.of("result", Set.of("opened", "refused"))),
            Map.entry(P + "refusals_total", Map.of("code", CODES)),
            Map.entry(P + "stream_closes_total", Map.of("code", CODES)),
            Map.entry(P + "overflow_closes_total", Map.of()),
            Map.entry(P + "open_streams", Map.of()),
            // additions beyond the R-MET table (buffer occupancy, docs/operations.md)
            Map.entry(P + "buffered_bytes", Map.of()),
            Map.entry(P + "stream_buffer_near_budget_total", Map.of()),
            Map.entry(P + "unknown_frames_total", Map.of()),
            Map.entry(P + "relayed_bytes_total",
                      Map.of("direction", Set.of("upstream_to_router", "router_to_upstream"))),
            Map.entry(P + "metadata_synced", Map.of()),
            Map.entry(P + "metadata_resources", Map.of()),
            Map.entry(P + "metadata_publishers", Map.of()),
            Map.entry(P + "metadata_watch_restarts_total",
                      Map.of("reason", Set.of("expired", "error", "closed", "timeout", "disconnected"))),
            Map.entry(P + "metadata_skipped_total",
                      Map.of("reason", Set.of("malformed_resource", "no_data", "malformed_channel",
                                              "invalid_endpoint", "oversized", "channel_cap", "publisher_cap",
                                              "resource_cap", "total_cap")))));

    /** Additions beyond the R-MET table for operations (docs/operations.md): family -> label key -> values. */
    private static final Map<String, Map<String, Set<String>>> OPERATIONS = new TreeMap<>(Map.ofEntries(
            Map.entry(P + "router_errors_total", Map.of("code", CODES)),
            Map.entry(P + "subscribe_open_duration_seconds", Map.of()),
            Map.entry(P + "publisher_dial_duration_seconds", Map.of("result", Set.of("connected", "failed"))),
            Map.entry(P + "bus_connect_duration_seconds", Map.of()),
            Map.entry(P + "metadata_list_duration_seconds", Map.of()),
            Map.entry(P + "metadata_last_sync_timestamp_seconds", Map.of()),
            Map.entry(P + "ca_bundle_not_after_timestamp_seconds", Map.of()),
            Map.entry(P + "build_info", Map.of("version", Set.of("test"),
                                               "java_version", Set.of(Runtime.version().toString()),
                                               "protocol_version", Set.of("1")))));

    /** Histogram families: their _bucket, _count, _sum samples and Micrometer's _max gauge belong to them. */
    private static final Set<String> HISTOGRAMS = Set.of(
            P + "subscribe_open_duration_seconds", P + "publisher_dial_duration_seconds",
            P + "bus_connect_duration_seconds", P + "metadata_list_duration_seconds");

    private BrokerMetrics metrics;
    private ObservabilityServer server;

    @BeforeEach
    void start() {
        metrics = BrokerMetrics.create();
        server = ObservabilityServer.start(new ListenAddress("127.0.0.1", 0), () -> false,
                                           () -> BrokerStatus.withoutRelay(SessionState.IDLE, Instant.EPOCH,
                                                                  "c", "https://r:443"),
                                           "test");
        server.serveMetrics(metrics);
    }

    @AfterEach
    void stop() {
        server.close();
        metrics.close();
    }

    @Test
    void exposesExactlyTheRMetAndOperationsFamiliesWithTheirLabelSetsFromStartUp() throws Exception {
        String text = scrape();
        Map<String, Map<String, Set<String>>> seen = new TreeMap<>();
        for (PrometheusText.Sample s : PrometheusText.samples(text)) {
            if (!s.name().startsWith(P)) {
                continue;
            }
            String family = family(s.name());
            if (family.equals(P + "build_info")) {
                assertEquals(1.0, s.value(), "build_info is always 1");
            } else if (family.endsWith("_timestamp_seconds")) {
                assertTrue(Double.isNaN(s.value()), "a timestamp is NaN until known, not 0 (1970 would alert): " + s);
            } else {
                assertEquals(0.0, s.value(), "not zero at start-up: " + s);
            }
            Map<String, Set<String>> labels = seen.computeIfAbsent(family, k -> new TreeMap<>());
            s.labels().forEach((k, v) -> {
                if (!k.equals("scope") && !k.equals("le")) { // Helidon always adds scope="application"
                    labels.computeIfAbsent(k, x -> new TreeSet<>()).add(v);
                }
            });
        }
        Map<String, Map<String, Set<String>>> expected = new TreeMap<>(R_MET);
        expected.putAll(OPERATIONS);
        assertEquals(expected.keySet(), seen.keySet());
        expected.forEach((name, labels) -> assertEquals(labels, seen.get(name), name));
    }

    private static String family(String sample) {
        for (String h : HISTOGRAMS) {
            for (String suffix : List.of("_bucket", "_count", "_sum", "_max")) {
                if (sample.equals(h + suffix)) {
                    return h;
                }
            }
        }
        return sample;
    }

    @Test
    void histogramsCountIntoTheirBucketsInSeconds() throws Exception {
        metrics.publisherDialed(DialOutcome.CONNECTED, Duration.ofMillis(3));
        metrics.publisherDialed(DialOutcome.FAILED, Duration.ofSeconds(10));
        metrics.subscribeOpened(Duration.ofMillis(40));
        metrics.busConnected(Duration.ofMillis(700));
        metrics.listed(Duration.ofSeconds(3));
        metrics.subscribeOpened(Duration.ofNanos(-1)); // a clock step backwards counts as 0, never throws

        String t = scrape();
        String dial = P + "publisher_dial_duration_seconds";
        assertEquals(0, bucket(t, dial + "_bucket", "result", "connected", "0.0025"));
        assertEquals(1, bucket(t, dial + "_bucket", "result", "connected", "0.005"));
        assertEquals(0.003, PrometheusText.value(t, dial + "_sum", "result", "connected"), 1e-9);
        assertEquals(1, bucket(t, dial + "_bucket", "result", "failed", "10.0"));
        assertEquals(0, bucket(t, dial + "_bucket", "result", "failed", "5.0"));
        String open = P + "subscribe_open_duration_seconds";
        assertEquals(2, PrometheusText.value(t, open + "_count", null, null));
        assertEquals(1, bucket(t, open + "_bucket", null, null, "0.001"), "the clamped negative one");
        assertEquals(2, bucket(t, open + "_bucket", null, null, "0.05"));
        assertEquals(0, bucket(t, P + "bus_connect_duration_seconds_bucket", null, null, "0.5"));
        assertEquals(1, bucket(t, P + "bus_connect_duration_seconds_bucket", null, null, "1.0"));
        assertEquals(1, bucket(t, P + "metadata_list_duration_seconds_bucket", null, null, "5.0"));
        assertEquals(0, bucket(t, P + "metadata_list_duration_seconds_bucket", null, null, "2.5"));
    }

    private static double bucket(String text, String name, String key, String value, String le) {
        return PrometheusText.samples(text).stream()
                .filter(s -> s.name().equals(name) && le.equals(s.labels().get("le")))
                .filter(s -> key == null || value.equals(s.labels().get(key)))
                .mapToDouble(PrometheusText.Sample::value)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no bucket " + name + " le=" + le + " in\n" + text));
    }

    @Test
    void routerErrorsAndTimestampsAreExposed() throws Exception {
        metrics.routerError(Code.SUPERSEDED, true);
        metrics.routerError(Code.fromWire("a_code_from_the_future"), false);
        metrics.bindMetadataLastSync(() -> 1_790_000_000.5);
        metrics.bindCaNotAfter(() -> 1_800_000_000);
        String t = scrape();
        assertEquals(1, PrometheusText.value(t, P + "router_errors_total", "code", "superseded"));
        assertEquals(1, PrometheusText.value(t, P + "router_errors_total", "code", "unknown"));
        assertEquals(1_790_000_000.5, PrometheusText.value(t, P + "metadata_last_sync_timestamp_seconds", null, null));
        assertEquals(1_800_000_000, PrometheusText.value(t, P + "ca_bundle_not_after_timestamp_seconds", null, null));
    }

    /** The standard JVM and process meters an operator's dashboards and the heap alert read. */
    @Test
    void jvmAndProcessMetersAreExposed() throws Exception {
        String t = scrape();
        Set<String> names = PrometheusText.samples(t).stream().map(PrometheusText.Sample::name)
                .collect(Collectors.toSet());
        for (String name : List.of("jvm_memory_used_bytes", "jvm_memory_max_bytes", "jvm_memory_committed_bytes",
                                   "jvm_memory_usage_after_gc", "jvm_gc_overhead", "jvm_gc_collections_total",
                                   "jvm_gc_collection_seconds_total", "jvm_threads_live_threads",
                                   "jvm_threads_states_threads", "jvm_classes_loaded_classes",
                                   "process_files_open_files", "process_files_max_files", "process_cpu_seconds_total",
                                   "process_cpu_usage", "process_uptime_seconds", "process_start_time_seconds")) {
            assertTrue(names.contains(name), name + " missing from\n" + t);
        }
        assertTrue(PrometheusText.samples(t).stream()
                           .filter(s -> s.name().equals("jvm_memory_max_bytes"))
                           .filter(s -> "heap".equals(s.labels().get("area")))
                           .anyMatch(s -> s.value() > 0), "a heap pool with a max: the heap alert's denominator");
    }

    /**
     * Helidon's registry takes its own lock and then Micrometer's when it registers or removes a meter;
     * a meter Micrometer registers by itself (a binder's lazy meter) takes them in the other order, through
     * Helidon's meter-added hook. Micrometer's GC binder registered its pause timers lazily, on the JMX
     * notification thread, the first time each kind of collection happened: a collection during the
     * server's start or stop deadlocked both threads (seen: BrokerMetricsTest hung in
     * ObservabilityServer.close). So every meter is registered up front, and a collection registers none.
     *
     * <p>JMX hands a GC notification to its listeners one after another on one thread, in the order they
     * were added: when the listener added here has seen the collection, the broker's listeners have run.
     */
    @Test
    void aGarbageCollectionRegistersNoMeter() throws Exception {
        io.micrometer.core.instrument.MeterRegistry micrometer =
                metrics.registry().unwrap(io.micrometer.core.instrument.MeterRegistry.class);
        List<String> added = new java.util.concurrent.CopyOnWriteArrayList<>();
        micrometer.config().onMeterAdded(m -> added.add(m.getId().getName() + m.getId().getTags()));
        java.util.concurrent.CountDownLatch seen = new java.util.concurrent.CountDownLatch(1);
        javax.management.NotificationListener listener = (n, handback) -> seen.countDown();
        List<javax.management.NotificationEmitter> emitters = new ArrayList<>();
        for (var gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof javax.management.NotificationEmitter e) {
                e.addNotificationListener(listener, null, null);
                emitters.add(e);
            }
        }
        try {
            System.gc();
            assertTrue(seen.await(30, java.util.concurrent.TimeUnit.SECONDS), "a GC notification");
        } finally {
            for (var e : emitters) {
                e.removeNotificationListener(listener);
            }
        }
        assertEquals(List.of(), added, "meters registered by a garbage collection");
    }

    /**
     * Helidon keeps its own view of every meter in the Micrometer registry and copies it when the registry
     * is closed (a later server replacing the global registry: in the demo's tests, the in-process broker
     * and then an in-process router). A meter type it has no wrapper for (a FunctionTimer) was kept as a
     * null there, and that close threw NullPointerException in MMeterRegistry.close.
     */
    @Test
    void helidonSeesEveryMeterTheBrokerRegistered() {
        assertTrue(metrics.registry().meters().stream().allMatch(java.util.Objects::nonNull), "a null meter");
    }

    @Test
    void everyCodeAndEndReasonOfTheProtocolEnumsIsALabelValue() {
        // The protocol enums are the source of the label values; guard against drift from section 7.
        assertEquals(CODES, Arrays.stream(Code.values()).map(Code::wire).collect(Collectors.toSet()));
        assertEquals(END_REASONS, Arrays.stream(EndReason.values()).map(EndReason::wire).collect(Collectors.toSet()));
    }

    @Test
    void typedMethodsCountUnderTheirLabels() throws Exception {
        metrics.sessionAttempt(AttemptResult.REFUSED);
        metrics.sessionEnded(EndReason.CONNECT_FAILED);
        metrics.reconnect();
        metrics.reconnect();
        metrics.subscribeOpened();
        metrics.subscribeRefused(Code.TARGET_NOT_ALLOWED);
        metrics.refusalSent(Code.TARGET_NOT_ALLOWED);
        metrics.streamClosed(Code.BUFFER_OVERFLOW);
        metrics.streamClosed(Code.UPSTREAM_CLOSED);
        metrics.relayed(Direction.UPSTREAM_TO_ROUTER, 1000);
        metrics.relayed(Direction.ROUTER_TO_UPSTREAM, 7);
        metrics.watchRestarted(RestartReason.EXPIRED);
        for (int i = 0; i < 3; i++) {
            metrics.skipped(SkipReason.CHANNEL_CAP);
        }
        metrics.bindSessionConnected(() -> true);
        metrics.bindOpenStreams(() -> 5);
        metrics.bindBufferedBytes(() -> 4160);
        metrics.streamNearBudget();
        metrics.bindMetadataSynced(() -> true);
        metrics.bindMetadataResources(() -> 12);
        metrics.bindMetadataPublishers(() -> 9);

        String t = scrape();
        assertEquals(1, PrometheusText.value(t, P + "session_attempts_total", "result", "refused"));
        assertEquals(0, PrometheusText.value(t, P + "session_attempts_total", "result", "welcomed"));
        assertEquals(1, PrometheusText.value(t, P + "session_ends_total", "reason", "connect_failed"));
        assertEquals(2, PrometheusText.value(t, P + "reconnects_total", null, null));
        assertEquals(1, PrometheusText.value(t, P + "subscribes_total", "result", "opened"));
        assertEquals(1, PrometheusText.value(t, P + "subscribes_total", "result", "refused"));
        assertEquals(1, PrometheusText.value(t, P + "refusals_total", "code", "target_not_allowed"));
        assertEquals(1, PrometheusText.value(t, P + "stream_closes_total", "code", "buffer_overflow"));
        assertEquals(1, PrometheusText.value(t, P + "stream_closes_total", "code", "upstream_closed"));
        assertEquals(1, PrometheusText.value(t, P + "overflow_closes_total", null, null));
        assertEquals(1000, PrometheusText.value(t, P + "relayed_bytes_total", "direction", "upstream_to_router"));
        assertEquals(7, PrometheusText.value(t, P + "relayed_bytes_total", "direction", "router_to_upstream"));
        assertEquals(1, PrometheusText.value(t, P + "metadata_watch_restarts_total", "reason", "expired"));
        assertEquals(3, PrometheusText.value(t, P + "metadata_skipped_total", "reason", "channel_cap"));
        assertEquals(1, PrometheusText.value(t, P + "session_connected", null, null));
        assertEquals(5, PrometheusText.value(t, P + "open_streams", null, null));
        assertEquals(4160, PrometheusText.value(t, P + "buffered_bytes", null, null));
        assertEquals(1, PrometheusText.value(t, P + "stream_buffer_near_budget_total", null, null));
        assertEquals(1, PrometheusText.value(t, P + "metadata_synced", null, null));
        assertEquals(12, PrometheusText.value(t, P + "metadata_resources", null, null));
        assertEquals(9, PrometheusText.value(t, P + "metadata_publishers", null, null));
    }

    @Test
    void unrecognizedWireCodesAreCountedAsUnknown() throws Exception {
        metrics.streamClosed(Code.fromWire("something_new"));
        assertEquals(1, PrometheusText.value(scrape(), P + "stream_closes_total", "code", "unknown"));
    }

    @Test
    void negativeAmountsAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> metrics.relayed(Direction.UPSTREAM_TO_ROUTER, -1));
    }

    /**
     * The exposition passes {@code promtool check metrics} (Prometheus's own parser and linter). Skipped
     * without promtool locally, required on CI ({@link Promtool}).
     */
    @Test
    void expositionPassesPromtoolCheckMetrics() throws Exception {
        Promtool.require();
        metrics.subscribeRefused(Code.DRAINING);
        metrics.publisherDialed(DialOutcome.CONNECTED, Duration.ofMillis(2));
        metrics.buildInfo("test");
        String text = scrape();
        String out = Promtool.run(Path.of("."), text.getBytes(StandardCharsets.UTF_8), "check", "metrics");
        assertEquals("", out.strip(), "promtool reported lint problems:\n" + out + "\n--- exposition:\n" + text);
    }

    private String scrape() throws IOException, InterruptedException {
        HttpResponse<String> r = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        return r.body();
    }
}
