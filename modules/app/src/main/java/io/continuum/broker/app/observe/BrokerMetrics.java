package io.continuum.broker.app.observe;

import io.continuum.broker.metadata.RestartReason;
import io.continuum.broker.metadata.SkipReason;
import io.continuum.broker.relay.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.RelayMetrics.Direction;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.EndReason;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.Meter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MetricsConfig;
import io.helidon.metrics.api.Tag;

/**
 * Every metric of the R-MET table, on a private Helidon (Micrometer) registry served at
 * {@code /metrics}. Every label value comes from a bounded enum and is registered at zero on
 * construction, so every series exists from start-up. Counter names carry no {@code _total}: the
 * Prometheus exposition appends it.
 *
 * <p>Counters are incremented through typed methods; gauges read suppliers bound later with the
 * {@code bind…} methods (they read 0 until bound), so the relay and the metadata view can be
 * created after this object.
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

    private final AtomicReference<BooleanSupplier> sessionConnected = new AtomicReference<>(() -> false);
    private final AtomicReference<LongSupplier> openStreams = new AtomicReference<>(() -> 0);
    private final AtomicReference<LongSupplier> bufferedBytes = new AtomicReference<>(() -> 0);
    private final AtomicReference<BooleanSupplier> metadataSynced = new AtomicReference<>(() -> false);
    private final AtomicReference<LongSupplier> metadataResources = new AtomicReference<>(() -> 0);
    private final AtomicReference<LongSupplier> metadataPublishers = new AtomicReference<>(() -> 0);

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
    }

    /**
     * Creates the metrics on a new private registry.
     *
     * @return metrics
     */
    public static BrokerMetrics create() {
        // A private registry per process (tests create several; the broker one): silence Helidon's
        // duplicate-registry warning, which assumes a single global registry.
        return new BrokerMetrics(MeterRegistry.create(MetricsConfig.builder()
                                                              .warnOnMultipleRegistries(false)
                                                              .build()));
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

    private void gauge(String name, String description, java.util.function.Supplier<Number> value) {
        Gauge<Double> g = registry.getOrCreate(
                Gauge.builder(PREFIX + name, () -> value.get().doubleValue()).description(description));
        meters.add(g);
    }
}
