package io.continuum.broker.app.observe;

import io.continuum.broker.metadata.RestartReason;
import io.continuum.broker.metadata.SkipReason;
import io.continuum.broker.relay.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.RelayMetrics.Direction;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

import io.continuum.broker.protocol.BusProtocol;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.EndReason;

import io.helidon.config.Config;
import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.Meter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MetricsConfig;
import io.helidon.metrics.api.MetricsFactory;
import io.helidon.metrics.api.Tag;
import io.helidon.metrics.api.Timer;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmHeapPressureMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;

/**
 * Every metric of the R-MET table, on a private Helidon (Micrometer) registry served at
 * {@code /metrics}. Every label value comes from a bounded enum and is registered at zero on
 * construction, so every series exists from start-up. Counter names carry no {@code _total}: the
 * Prometheus exposition appends it.
 *
 * <p>Counters are incremented through typed methods; gauges read suppliers bound later with the
 * {@code bind…} methods (they read 0 until bound, timestamps NaN), so the relay and the metadata view
 * can be created after this object.
 *
 * <p>Beside the broker's own families the registry carries the standard JVM and process meters of
 * Micrometer's binders ({@code jvm_memory_*}, {@code jvm_gc_*}, {@code jvm_threads_*},
 * {@code jvm_classes_*}, {@code process_files_*}, {@code process_uptime_seconds}, {@code process_start_time_seconds})
 * and the process's CPU ({@code process_cpu_seconds_total}, {@code process_cpu_usage}): Helidon's own "base"
 * meters lack file descriptors and process CPU. Their labels
 * ({@code area}, {@code id}, {@code gc}, {@code action}, {@code cause}, {@code state}) take values from the
 * JVM's fixed sets of memory pools, collectors, GC causes and thread states.
 */
public final class BrokerMetrics implements AutoCloseable {
    /** Prefix of every metric name. */
    public static final String PREFIX = "continuum_event_broker_";

    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();

    private final Map<AttemptResult, Counter> sessionAttempts = new EnumMap<>(AttemptResult.class);
    private final Map<EndReason, Counter> sessionEnds = new EnumMap<>(EndReason.class);
    private final Counter reconnects;
    private final Map<SubscribeResult, Counter> subscribes = new EnumMap<>(SubscribeResult.class);
    private final Map<Code, Counter> refusals = new EnumMap<>(Code.class);
    private final Map<Code, Counter> streamCloses = new EnumMap<>(Code.class);
    private final Counter overflowCloses;
    private final Counter nearBudgetStreams;
    private final Map<Direction, Counter> relayedBytes = new EnumMap<>(Direction.class);
    private final Map<RestartReason, Counter> watchRestarts = new EnumMap<>(RestartReason.class);
    private final Map<SkipReason, Counter> skipped = new EnumMap<>(SkipReason.class);
    private final Map<Code, Counter> routerErrors = new EnumMap<>(Code.class);
    private final Timer subscribeOpen;
    private final Map<DialResult, Timer> publisherDials = new EnumMap<>(DialResult.class);
    private final Timer busConnect;
    private final Timer metadataList;
    private final List<AutoCloseable> binders = new ArrayList<>();
    private final AtomicBoolean buildInfo = new AtomicBoolean();

    private final AtomicReference<BooleanSupplier> sessionConnected = new AtomicReference<>(() -> false);
    private final AtomicReference<LongSupplier> openStreams = new AtomicReference<>(() -> 0);
    private final AtomicReference<LongSupplier> bufferedBytes = new AtomicReference<>(() -> 0);
    private final AtomicReference<BooleanSupplier> metadataSynced = new AtomicReference<>(() -> false);
    private final AtomicReference<LongSupplier> metadataResources = new AtomicReference<>(() -> 0);
    private final AtomicReference<LongSupplier> metadataPublishers = new AtomicReference<>(() -> 0);
    private final AtomicReference<DoubleSupplier> metadataLastSync = new AtomicReference<>(() -> Double.NaN);
    private final AtomicReference<DoubleSupplier> caNotAfter = new AtomicReference<>(() -> Double.NaN);

    /** {@code publisher_dial_duration_seconds{result}}. */
    public enum DialResult {
        /** The publisher socket connected. */
        CONNECTED("connected"),
        /** Name resolution or every connect attempt failed ({@code upstream_connect_failed}). */
        FAILED("failed");

        private final String label;

        DialResult(String label) {
            this.label = label;
        }

        /**
         * Label value.
         *
         * @return label
         */
        public String label() {
            return label;
        }
    }

    /*
     * Histogram buckets, in seconds, fitted to what each one measures (upper bounds; +Inf is added).
     * Subscribe to stream_opened: checks, DNS (deadline 5 s), connect (10 s) and an HTTP/2 stream slot
     * (5 s); in a cluster normally a few milliseconds.
     */
    static final Duration[] SUBSCRIBE_OPEN_BUCKETS = seconds(
            0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30);
    /** Publisher dial: checks, DNS and TCP connect to a Pod on the cluster network, bounded by the 10 s budget. */
    static final Duration[] PUBLISHER_DIAL_BUCKETS = seconds(
            0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10);
    /** Bus connect to welcome: TCP, TLS and HTTP/2 set-up plus hello/welcome across a WAN; bounded by bus_connect_timeout. */
    static final Duration[] BUS_CONNECT_BUCKETS = seconds(
            0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60);
    /** Metadata list: every page of a namespace (32 resources each) from the API server, up to 16,384 resources. */
    static final Duration[] METADATA_LIST_BUCKETS = seconds(
            0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120);

    private BrokerMetrics(MeterRegistry registry) {
        this.registry = registry;
        gauge("session_connected", "1 while a session is welcomed, else 0",
              () -> sessionConnected.get().getAsBoolean() ? 1 : 0);
        for (AttemptResult r : AttemptResult.values()) {
            sessionAttempts.put(r, counter("session_attempts", "Session attempts by result", "result", r.label()));
        }
        for (EndReason r : EndReason.values()) {
            sessionEnds.put(r, counter("session_ends", "Ended sessions (including attempts that never reached welcome)"
                    + " by reason", "reason", r.wire()));
        }
        reconnects = counter("reconnects", "Session attempts after the first one of the process", null, null);
        for (SubscribeResult r : SubscribeResult.values()) {
            subscribes.put(r, counter("subscribes", "Subscribe commands received by result", "result", r.label()));
        }
        for (Code c : Code.values()) {
            refusals.put(c, counter("refusals", "stream_refused frames sent by code", "code", c.wire()));
        }
        for (Code c : Code.values()) {
            streamCloses.put(c, counter("stream_closes", "stream_closed frames sent (streams that ended without"
                    + " unsubscribe) by code", "code", c.wire()));
        }
        overflowCloses = counter("overflow_closes", "Data streams closed by buffer overflow", null, null);
        gauge("open_streams", "Open data streams", () -> openStreams.get().getAsLong());
        // Two additions beyond the R-MET table (issue 10): buffer occupancy before anything overflows.
        gauge("buffered_bytes", "Bytes queued toward the router across the session's data streams, 64 bytes of"
              + " overhead per chunk included (R-BUF 2-3: at most 64 MiB)", () -> bufferedBytes.get().getAsLong());
        nearBudgetStreams = counter("stream_buffer_near_budget", "Data streams whose queue toward the router reached"
                + " 80 % of the per-stream budget (counted once per stream)", null, null);
        for (Direction d : Direction.values()) {
            relayedBytes.put(d, counter("relayed_bytes", "Bytes relayed by direction (bytes dropped by an overflow"
                    + " are not counted)", "direction", d.label()));
        }
        gauge("metadata_synced", "1 once every watched namespace finished its initial list, else 0",
              () -> metadataSynced.get().getAsBoolean() ? 1 : 0);
        gauge("metadata_resources", "DynamoWorkerMetadata resources held in the view",
              () -> metadataResources.get().getAsLong());
        gauge("metadata_publishers", "Unique advertised publishers held in the view",
              () -> metadataPublishers.get().getAsLong());
        for (RestartReason r : RestartReason.values()) {
            watchRestarts.put(r, counter("metadata_watch_restarts", "Ended metadata watch passes by reason",
                                         "reason", r.label()));
        }
        for (SkipReason r : SkipReason.values()) {
            skipped.put(r, counter("metadata_skipped", "Skipped DynamoWorkerMetadata entries or resources by reason",
                                   "reason", r.label()));
        }
        // Additions beyond the R-MET table (operations): distributions, router errors, expiry and staleness.
        for (Code c : Code.values()) {
            routerErrors.put(c, counter("router_errors", "error frames received from the router (terminal or not)"
                    + " by code; codes this version does not know count as unknown", "code", c.wire()));
        }
        subscribeOpen = timer("subscribe_open_duration", "Seconds from a subscribe to its stream_opened",
                              SUBSCRIBE_OPEN_BUCKETS, null, null);
        for (DialResult r : DialResult.values()) {
            publisherDials.put(r, timer("publisher_dial_duration", "Seconds to check, resolve and connect to a"
                    + " publisher, by result (targets refused by a check are not dials)", PUBLISHER_DIAL_BUCKETS,
                    "result", r.label()));
        }
        busConnect = timer("bus_connect_duration", "Seconds from the start of a session attempt (TCP connect) to"
                + " welcome, for attempts that were welcomed", BUS_CONNECT_BUCKETS, null, null);
        metadataList = timer("metadata_list_duration", "Seconds to list one watched namespace completely (every"
                + " page, committed)", METADATA_LIST_BUCKETS, null, null);
        gauge("metadata_last_sync_timestamp_seconds", "Unix time at which the metadata view was last known to be"
              + " current, the oldest across watched namespaces (NaN before the initial sync)",
              () -> metadataLastSync.get().getAsDouble());
        gauge("ca_bundle_not_after_timestamp_seconds", "Unix time at which the first certificate of the CA bundle"
              + " expires (NaN without a ca_file)", () -> caNotAfter.get().getAsDouble());
    }

    private static Duration[] seconds(double... upperBounds) {
        Duration[] d = new Duration[upperBounds.length];
        for (int i = 0; i < upperBounds.length; i++) {
            d[i] = Duration.ofNanos(Math.round(upperBounds[i] * 1e9));
        }
        return d;
    }

    /**
     * Creates the metrics on a new private registry.
     *
     * @return metrics
     */
    public static BrokerMetrics create() {
        // A private registry per process (tests create several; the broker one): silence Helidon's
        // duplicate-registry warning, which assumes a single global registry. An explicit empty Helidon
        // config: without one, MetricsConfig and MetricsFactory ask Helidon's global service registry for
        // the application's Config, and building that registry (discovering the service descriptors of
        // every module) was most of the work before /healthz could answer. The broker has its own
        // configuration; nothing here is meant to be set through Helidon's (application.yaml, METRICS_*).
        MetricsConfig config = MetricsConfig.builder()
                .config(Config.empty())
                .warnOnMultipleRegistries(false)
                .build();
        BrokerMetrics m = new BrokerMetrics(Factory.INSTANCE.createMeterRegistry(config));
        m.bindJvmAndProcess();
        return m;
    }

    /** Helidon's Micrometer metrics factory, created once per process from an empty config (see create()). */
    private static final class Factory {
        static final MetricsFactory INSTANCE = MetricsFactory.getInstance(Config.empty());

        private Factory() {
        }
    }

    /**
     * Micrometer's standard binders on the registry's Micrometer side; the one that holds a JMX
     * notification listener (heap pressure) is closed with this object.
     *
     * <p>Every meter is registered here, once: none may be registered later from another thread. Helidon's
     * registry takes its own lock, then Micrometer's, to register or remove a meter; a meter that Micrometer
     * registers by itself reaches Helidon's lock through its meter-added hook, in the other order. That is
     * why Micrometer's {@code JvmGcMetrics} is not bound: it registers a pause timer per kind of collection
     * on the JMX notification thread when that kind first happens, and a collection during the server's
     * start or stop deadlocked the two threads. Collections are counted from the collectors' own totals
     * instead ({@code jvm_gc_collections_total} and {@code jvm_gc_collection_seconds_total}, registered up
     * front per collector).
     */
    private void bindJvmAndProcess() {
        io.micrometer.core.instrument.MeterRegistry micrometer =
                registry.unwrap(io.micrometer.core.instrument.MeterRegistry.class);
        JvmHeapPressureMetrics pressure = new JvmHeapPressureMetrics();
        binders.add(pressure);
        for (MeterBinder b : List.of(new JvmMemoryMetrics(), pressure, new JvmThreadMetrics(),
                                     new ClassLoaderMetrics(), new FileDescriptorMetrics(), new UptimeMetrics())) {
            b.bindTo(micrometer);
        }
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            // A bounded label: the JVM's collectors (two or three for G1). Two counters, not a FunctionTimer:
            // Helidon's registry has no wrapper for a FunctionTimer and keeps a null for it, which breaks
            // its close (NPE when the next server replaces the global registry).
            FunctionCounter.builder("jvm.gc.collections", gc, GarbageCollectorMXBean::getCollectionCount)
                    .tag("gc", gc.getName())
                    .description("Collections by this collector (its own total)")
                    .register(micrometer);
            FunctionCounter.builder("jvm.gc.collection", gc, g -> g.getCollectionTime() / 1e3)
                    .tag("gc", gc.getName())
                    .baseUnit("seconds")
                    .description("Time this collector spent collecting (its own total; for a concurrent collector "
                                 + "this includes concurrent phases, not only pauses)")
                    .register(micrometer);
        }
        // Not Micrometer's ProcessorMetrics: its process_cpu_time_ns_total and system_cpu_count fail promtool's
        // lint (abbreviated unit, _count suffix on a gauge). The Prometheus client's own name instead.
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            FunctionCounter.builder("process.cpu", os, o -> o.getProcessCpuTime() / 1e9)
                    .baseUnit("seconds")
                    .description("CPU time used by the broker's process")
                    .register(micrometer);
            io.micrometer.core.instrument.Gauge.builder("process.cpu.usage", os,
                                                        com.sun.management.OperatingSystemMXBean::getProcessCpuLoad)
                    .description("Recent CPU usage of the broker's process, 0 to 1 of all processors available to it")
                    .register(micrometer);
        }
    }

    /**
     * The registry to serve at {@code /metrics}.
     *
     * @return registry
     */
    public MeterRegistry registry() {
        return registry;
    }

    /**
     * Every meter this object registered (tests, diagnostics).
     *
     * @return meters in registration order
     */
    public List<Meter> meters() {
        return Collections.unmodifiableList(meters);
    }

    /**
     * A session attempt finished (R-MET {@code session_attempts_total}). An attempt that never reached
     * {@code welcome} must also be reported with {@link #sessionEnded(EndReason)}.
     *
     * @param result result
     */
    public void sessionAttempt(AttemptResult result) {
        sessionAttempts.get(result).increment();
    }

    /**
     * A session (or an attempt that never reached {@code welcome}) ended.
     *
     * @param reason end reason
     */
    public void sessionEnded(EndReason reason) {
        sessionEnds.get(reason).increment();
    }

    /**
     * An attempt other than the process's first is starting.
     */
    public void reconnect() {
        reconnects.increment();
    }

    /**
     * A subscribe was answered with {@code stream_opened}.
     */
    public void subscribeOpened() {
        subscribes.get(SubscribeResult.OPENED).increment();
    }

    /**
     * A subscribe was answered with {@code stream_refused}: counts {@code subscribes_total{result="refused"}}
     * and {@code refusals_total{code}} (R-SEC-10).
     *
     * @param code refusal code
     */
    public void subscribeRefused(Code code) {
        subscribes.get(SubscribeResult.REFUSED).increment();
        refusals.get(code).increment();
    }

    /**
     * A {@code stream_closed} frame was sent. For {@link Code#BUFFER_OVERFLOW} also counts
     * {@code overflow_closes_total}.
     *
     * @param code close code
     */
    public void streamClosed(Code code) {
        streamCloses.get(code).increment();
        if (code == Code.BUFFER_OVERFLOW) {
            overflowCloses.increment();
        }
    }

    /**
     * A data stream's queue toward the router reached 80 % of its per-stream budget (once per stream).
     */
    public void streamNearBudget() {
        nearBudgetStreams.increment();
    }

    /**
     * Bytes relayed.
     *
     * @param direction direction
     * @param bytes     bytes handed to the data stream ({@code upstream_to_router}) or written to the
     *                  publisher socket ({@code router_to_upstream}); not negative
     */
    public void relayedBytes(Direction direction, long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes < 0");
        }
        if (bytes > 0) {
            relayedBytes.get(direction).increment(bytes);
        }
    }

    /**
     * A metadata watch pass ended.
     *
     * @param reason why
     */
    public void watchRestart(RestartReason reason) {
        watchRestarts.get(reason).increment();
    }

    /**
     * Metadata entries or resources were skipped.
     *
     * @param reason why
     * @param count  how many (one per entry skipped)
     */
    public void metadataSkipped(SkipReason reason, long count) {
        if (count < 0) {
            throw new IllegalArgumentException("count < 0");
        }
        if (count > 0) {
            skipped.get(reason).increment(count);
        }
    }

    /**
     * A subscribe was answered with {@code stream_opened}, {@code elapsed} after it arrived: counts
     * {@code subscribes_total{result="opened"}} and observes {@code subscribe_open_duration_seconds}.
     *
     * @param elapsed from the subscribe frame to stream_opened
     */
    public void subscribeOpened(Duration elapsed) {
        subscribeOpened();
        subscribeOpen.record(nonNegative(elapsed));
    }

    /**
     * A publisher dial ended.
     *
     * @param result  connected or failed
     * @param elapsed from the start of the checks to the connected socket or the failure
     */
    public void publisherDialed(DialResult result, Duration elapsed) {
        publisherDials.get(result).record(nonNegative(elapsed));
    }

    /**
     * A session attempt was welcomed.
     *
     * @param elapsed from the start of the attempt to {@code welcome}
     */
    public void busConnected(Duration elapsed) {
        busConnect.record(nonNegative(elapsed));
    }

    /**
     * A namespace's list completed and committed.
     *
     * @param elapsed from the first page request to the commit
     */
    public void metadataListed(Duration elapsed) {
        metadataList.record(nonNegative(elapsed));
    }

    /**
     * An {@code error} frame arrived from the router, terminal or not.
     *
     * @param code its code ({@link Code#UNKNOWN} for codes this version does not know)
     */
    public void routerError(Code code) {
        routerErrors.get(code).increment();
    }

    /**
     * Registers {@code build_info} (value 1) once; later calls are ignored.
     *
     * @param version broker version
     */
    public void buildInfo(String version) {
        if (!buildInfo.compareAndSet(false, true)) {
            return;
        }
        Gauge<Double> g = registry.getOrCreate(
                Gauge.builder(PREFIX + "build_info", () -> 1.0)
                        .description("Always 1; the labels name the build: broker version, Java runtime version,"
                                     + " bus protocol version")
                        .tags(List.of(Tag.create("version", version),
                                      Tag.create("java_version", Runtime.version().toString()),
                                      Tag.create("protocol_version", Integer.toString(BusProtocol.VERSION)))));
        meters.add(g);
    }

    /**
     * Binds {@code metadata_last_sync_timestamp_seconds}.
     *
     * @param epochSeconds Unix time of the view's last confirmed sync (oldest namespace), NaN before the first
     */
    public void bindMetadataLastSync(DoubleSupplier epochSeconds) {
        metadataLastSync.set(epochSeconds);
    }

    /**
     * Binds {@code ca_bundle_not_after_timestamp_seconds}.
     *
     * @param epochSeconds Unix time at which the bundle's first certificate expires, NaN when unknown
     */
    public void bindCaNotAfter(DoubleSupplier epochSeconds) {
        caNotAfter.set(epochSeconds);
    }

    private static Duration nonNegative(Duration d) {
        return d.isNegative() ? Duration.ZERO : d;
    }

    /**
     * Binds {@code session_connected}.
     *
     * @param source true while a session is welcomed
     */
    public void bindSessionConnected(BooleanSupplier source) {
        sessionConnected.set(source);
    }

    /**
     * Binds {@code open_streams}.
     *
     * @param source open data streams
     */
    public void bindOpenStreams(LongSupplier source) {
        openStreams.set(source);
    }

    /**
     * Binds {@code buffered_bytes}.
     *
     * @param source bytes charged against the current session's budget
     */
    public void bindBufferedBytes(LongSupplier source) {
        bufferedBytes.set(source);
    }

    /**
     * Binds {@code metadata_synced}.
     *
     * @param source true once every watched namespace finished its initial list
     */
    public void bindMetadataSynced(BooleanSupplier source) {
        metadataSynced.set(source);
    }

    /**
     * Binds {@code metadata_resources}.
     *
     * @param source resources held
     */
    public void bindMetadataResources(LongSupplier source) {
        metadataResources.set(source);
    }

    /**
     * Binds {@code metadata_publishers}.
     *
     * @param source unique publishers held
     */
    public void bindMetadataPublishers(LongSupplier source) {
        metadataPublishers.set(source);
    }

    /**
     * Removes every meter of this object from the registry.
     */
    @Override
    public void close() {
        meters.forEach(registry::remove);
        meters.clear();
        for (AutoCloseable b : binders) {
            try {
                b.close();
            } catch (Exception ignored) {
                // JMX listener removal only
            }
        }
        binders.clear();
    }

    private Counter counter(String name, String description, String labelKey, String labelValue) {
        Counter.Builder b = Counter.builder(PREFIX + name).description(description);
        if (labelKey != null) {
            b.tags(List.of(Tag.create(labelKey, labelValue)));
        }
        Counter c = registry.getOrCreate(b);
        meters.add(c);
        return c;
    }

    private Timer timer(String name, String description, Duration[] buckets, String labelKey, String labelValue) {
        // No client-side percentiles (Helidon adds some by default): quantiles are computed in PromQL from the buckets.
        Timer.Builder b = Timer.builder(PREFIX + name).description(description).buckets(buckets).percentiles(new double[0]);
        if (labelKey != null) {
            b.tags(List.of(Tag.create(labelKey, labelValue)));
        }
        Timer t = registry.getOrCreate(b);
        meters.add(t);
        return t;
    }

    private void gauge(String name, String description, java.util.function.Supplier<Number> value) {
        Gauge<Double> g = registry.getOrCreate(
                Gauge.builder(PREFIX + name, () -> value.get().doubleValue()).description(description));
        meters.add(g);
    }
}
