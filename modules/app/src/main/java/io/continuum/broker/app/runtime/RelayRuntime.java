package io.continuum.broker.app.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.continuum.broker.app.config.BrokerConfig;
import io.continuum.broker.app.observe.BrokerMetrics;
import io.continuum.broker.app.observe.BrokerStatus;
import io.continuum.broker.app.observe.CaBundleExpiry;
import io.continuum.broker.app.secrets.CaBundleSource;
import io.continuum.broker.metadata.watch.MetadataWatcher;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.SessionLimits;
import io.continuum.broker.relay.EventBroker;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayStatus;

/**
 * The real runtime: the {@code DynamoWorkerMetadata} view (list/watch through the Kubernetes API)
 * and the relay's session loop on top of it, counting into {@link BrokerMetrics}.
 */
public final class RelayRuntime implements BrokerRuntime {
    private final BrokerContext context;
    private final MetadataWatcher metadata;
    private final EventBroker broker;
    private final Clock clock;

    /**
     * Wires the runtime from the shell's context.
     *
     * @param context configuration, secrets, metrics
     */
    public RelayRuntime(BrokerContext context) {
        this(context, null);
    }

    /**
     * Wires the runtime, with an explicit Kubernetes client (tests and the demo point it at an
     * in-process API server).
     *
     * @param context   configuration, secrets, metrics
     * @param apiClient Kubernetes client, or null for the standard discovery (KUBECONFIG, then in-cluster)
     */
    public RelayRuntime(BrokerContext context, io.kubernetes.client.openapi.ApiClient apiClient) {
        this.context = context;
        this.clock = Clock.systemUTC();
        BrokerConfig config = context.config();
        BrokerMetrics metrics = context.metrics();
        MetadataWatcher.Builder view = MetadataWatcher.builder()
                .namespaces(config.watchNamespaces())
                .metrics(metrics);
        if (apiClient != null) {
            view.apiClient(apiClient);
        }
        try {
            this.metadata = view.build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot configure the Kubernetes client: " + e.getMessage(), e);
        }
        RelayConfig relayConfig = RelayConfig.builder()
                .busUrl(config.busUrl().toUri())
                .tlsServerName(config.tlsServerName())
                .caCertificates(context.caBundle().map(RelayRuntime::certificates).orElse(null))
                .credential(() -> context.credential().load())
                .clientId(config.clientId())
                .kubernetesNamespace(config.kubernetesNamespace())
                .dynamoNamespaces(config.dynamoNamespaces())
                .allowedCidrs(config.allowedCidrs())
                .reconnectBackoff(config.reconnectBackoff())
                .drainDeadline(config.drainDeadline())
                .busConnectTimeout(config.busConnectTimeout())
                .upstreamConnectTimeout(config.upstreamConnectTimeout())
                .build();
        this.broker = EventBroker.create(relayConfig, metadata, metrics);
        metrics.bindSessionConnected(broker::connected);
        metrics.bindOpenStreams(broker::openStreams);
        metrics.bindBufferedBytes(broker::bufferedBytes);
        metrics.bindMetadataSynced(metadata::isSynced);
        metrics.bindMetadataResources(metadata::resourceCount);
        metrics.bindMetadataPublishers(metadata::publisherCount);
        metrics.bindMetadataLastSync(() -> metadata.lastSynced().map(t -> t.toEpochMilli() / 1000.0).orElse(Double.NaN));
        context.caBundle().ifPresent(ca -> metrics.bindCaNotAfter(
                new CaBundleExpiry(ca, Clock.systemUTC(), CaBundleExpiry.DEFAULT_REFRESH)));
    }

    /** Re-reads and re-checks the CA bundle at every session attempt, so a rotated bundle applies at the next. */
    private static Callable<List<X509Certificate>> certificates(CaBundleSource source) {
        return () -> source.load().certificates();
    }

    @Override
    public BooleanSupplier ready() {
        return metadata::isSynced;
    }

    @Override
    public Supplier<BrokerStatus> status() {
        return () -> {
            RelayStatus s = broker.status();
            SessionLimits l = s.limits();
            return new BrokerStatus(s.state(), Instant.now(clock), context.config().clientId(),
                    context.config().busUrl().toString(),
                    l == null ? Optional.empty() : Optional.of(new BrokerStatus.Limits(
                            l.heartbeatInterval().toMillis(), l.idleTimeout().toMillis(), l.maxStreams(),
                            l.maxStreamBufferBytes(), l.maxFrameBytes())),
                    s.openStreams().size(), metadata.isSynced(), metadata.resourceCount(), metadata.publisherCount(),
                    details(s));
        };
    }

    private static BrokerStatus.Details details(RelayStatus s) {
        Map<Code, Long> refusals = new EnumMap<>(Code.class);
        for (RelayStatus.Refusal r : s.recentRefusals()) {
            refusals.merge(r.code(), 1L, Long::sum);
        }
        return new BrokerStatus.Details(s.sessionId(), s.nextAttemptAt(), s.bufferedBytes(),
                s.openStreams().stream().map(o -> new BrokerStatus.Stream(o.streamId(), o.target(), o.age().toMillis(),
                        o.bytesToRouter(), o.bytesToPublisher(), o.bufferedBytes())).toList(),
                s.recentEnds().stream().map(e -> new BrokerStatus.End(e.at(), e.result(), e.reason())).toList(),
                refusals);
    }

    @Override
    public void start() {
        metadata.start();
        broker.start();
    }

    @Override
    public void shutdown(Duration drainDeadline) throws InterruptedException {
        try {
            broker.shutdown(drainDeadline);
        } finally {
            metadata.close();
        }
    }
}
