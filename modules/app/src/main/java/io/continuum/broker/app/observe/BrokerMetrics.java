package io.continuum.broker.app.observe;

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

import io.continuum.broker.metadata.MetadataMetrics;
import io.continuum.broker.metadata.RestartReason;
import io.continuum.broker.metadata.SkipReason;
import io.continuum.broker.protocol.BusProtocol;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.relay.api.RelayMetrics;

import io.helidon.config.Config;
import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.Meter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MetricsConfig;
import io.helidon.metrics.api.MetricsFactory;
import io.helidon.metrics.api.Tag;
import io.helidon.metrics.api.Timer;

import static io.continuum.broker.app.observe.HistogramBuckets.BUS_CONNECT_BUCKETS;
import static io.continuum.broker.app.observe.HistogramBuckets.METADATA_LIST_BUCKETS;
import static io.continuum.broker.app.observe.HistogramBuckets.PUBLISHER_DIAL_BUCKETS;
import static io.continuum.broker.app.observe.HistogramBuckets.SUBSCRIBE_OPEN_BUCKETS;

/**
 * Every metric of the R-MET table, on a private Helidon (Micrometer) registry served at
 * {@code /metrics}. Every label value comes from a bounded enum and is registered at zero on
 * construction, so every series exists from start-up. Counter names carry no {@code _total}: the
 * Prometheus exposition appends it.
 *
 * <p>The relay and the metadata view count straight into it: it is their {@link RelayMetrics} and
 * {@link MetadataMetrics}. Gauges read suppliers bound later with the
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
public final class BrokerMetrics implements RelayMetrics, MetadataMetrics, AutoCloseable {
    /** Prefix of every metric name. */
    public static final String PREFIX = "continuum_event_broker_";

    private final MetricsConfig config;
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
    private final Counter unknownFrames;
    private final Map<Direction, Counter> relayedBytes = new EnumMap<>(Direction.class);
    private final Map<RestartReason, Counter> watchRestarts = new EnumMap<>(RestartReason.class);
    private final Map<SkipReason, Counter> skipped = new EnumMap<>(SkipReason.class);
    private final Map<Code, Counter> routerErrors = new EnumMap<>(Code.class);
    private final Timer subscribeOpen;
    private final Map<DialOutcome, Timer> publisherDials = new EnumMap<>(DialOutcome.class);
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

    private BrokerMetrics(MetricsConfig config, MeterRegistry registry) {
        this.config = config;
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
        // Additions beyond the R-MET table: buffer occupancy before anything overflows, and router frames ignored.
        gauge("buffered_bytes", "Bytes queued toward the router across the session's data streams, 64 bytes of"
              + " overhead per chunk included (R-BUF 2-3: at most 64 MiB)", () -> bufferedBytes.get().getAsLong());
        nearBudgetStreams = counter("stream_buffer_near_budget", "Data streams whose queue toward the router reached"
                + " 80 % of the per-stream budget (counted once per stream)", null, null);
        unknownFrames = counter("unknown_frames", "Router frames of a type this broker does not know, ignored",
                null, null);
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
        for (DialOutcome r : DialOutcome.values()) {
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
        BrokerMetrics m = new BrokerMetrics(config, Factory.INSTANCE.createMeterRegistry(config));
        JvmProcessMeters.bind(m.registry, m.binders);
        return m;
    }

    /** Helidon's Micrometer metrics factory, created once per process from an empty config (see create()). */
    private static final class Factory {
        static final MetricsFactory INSTANCE = MetricsFactory.getInstance(Config.empty());

        private Factory() {
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

    /** The registry's Helidon metrics settings (defaults: the scope tag is {@code scope}), for its formatter. */
    MetricsConfig config() {
        return config;
    }

    /**
     * Every meter this object registered (tests, diagnostics).
     *
     * @return meters in registration order
     */
    public List<Meter> meters() {
        return Collections.unmodifiableList(meters);
    }

    @Override
    public void sessionAttempt(AttemptResult result) {
        sessionAttempts.get(result).increment();
    }

    @Override
    public void sessionEnded(EndReason reason) {
        sessionEnds.get(reason).increment();
    }

    @Override
    public void reconnect() {
        reconnects.increment();
    }

    @Override
    public void subscribeOpened() {
        subscribes.get(SubscribeResult.OPENED).increment();
    }

    /** Counts {@code subscribes_total{result="refused"}} and {@code refusals_total{code}} (R-SEC-10). */
    @Override
    public void subscribeRefused(Code code) {
        subscribes.get(SubscribeResult.REFUSED).increment();
    }

    @Override
    public void refusalSent(Code code) {
        refusals.get(code).increment();
    }

    /** For {@link Code#BUFFER_OVERFLOW} also counts {@code overflow_closes_total}. */
    @Override
    public void streamClosed(Code code) {
        streamCloses.get(code).increment();
        if (code == Code.BUFFER_OVERFLOW) {
            overflowCloses.increment();
        }
    }

    @Override
    public void streamNearBudget() {
        nearBudgetStreams.increment();
    }

    @Override
    public void unknownFrame() {
        unknownFrames.increment();
    }

    @Override
    public void relayed(Direction direction, long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes < 0");
        }
        if (bytes > 0) {
            relayedBytes.get(direction).increment(bytes);
        }
    }

    @Override
    public void watchRestarted(RestartReason reason) {
        watchRestarts.get(reason).increment();
    }

    @Override
    public void skipped(SkipReason reason) {
        skipped.get(reason).increment();
    }

    /** Counts {@code subscribes_total{result="opened"}} and observes {@code subscribe_open_duration_seconds}. */
    @Override
    public void subscribeOpened(Duration sinceSubscribe) {
        subscribeOpened();
        subscribeOpen.record(nonNegative(sinceSubscribe));
    }

    @Override
    public void publisherDialed(DialOutcome result, Duration elapsed) {
        publisherDials.get(result).record(nonNegative(elapsed));
    }

    @Override
    public void busConnected(Duration sinceAttemptStart) {
        busConnect.record(nonNegative(sinceAttemptStart));
    }

    @Override
    public void listed(Duration elapsed) {
        metadataList.record(nonNegative(elapsed));
    }

    @Override
    public void routerError(Code code, boolean terminal) {
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

    /** Binds {@code metadata_last_sync_timestamp_seconds}: the oldest namespace's last confirmed sync, NaN before. */
    public void bindMetadataLastSync(DoubleSupplier epochSeconds) {
        metadataLastSync.set(epochSeconds);
    }

    /** Binds {@code ca_bundle_not_after_timestamp_seconds}: the first certificate's expiry, NaN when unknown. */
    public void bindCaNotAfter(DoubleSupplier epochSeconds) {
        caNotAfter.set(epochSeconds);
    }

    private static Duration nonNegative(Duration d) {
        return d.isNegative() ? Duration.ZERO : d;
    }

    /** Binds {@code session_connected} to a source: true while a session is welcomed. */
    public void bindSessionConnected(BooleanSupplier source) {
        sessionConnected.set(source);
    }

    /** Binds {@code open_streams} to a source: open data streams. */
    public void bindOpenStreams(LongSupplier source) {
        openStreams.set(source);
    }

    /** Binds {@code buffered_bytes} to the bytes charged against the current session's budget. */
    public void bindBufferedBytes(LongSupplier source) {
        bufferedBytes.set(source);
    }

    /** Binds {@code metadata_synced}: true once every watched namespace finished its initial list. */
    public void bindMetadataSynced(BooleanSupplier source) {
        metadataSynced.set(source);
    }

    /** Binds {@code metadata_resources} to a source: resources held. */
    public void bindMetadataResources(LongSupplier source) {
        metadataResources.set(source);
    }

    /** Binds {@code metadata_publishers} to a source: unique publishers held. */
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
