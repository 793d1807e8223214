package io.continuum.broker.app.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.continuum.broker.app.config.BrokerConfig;
import io.continuum.broker.app.observe.BrokerMetrics;
import io.continuum.broker.app.observe.BrokerStatus;
import io.continuum.broker.app.observe.CaBundleExpiry;
import io.continuum.broker.app.secrets.CaBundleSource;
import io.continuum.broker.metadata.watch.MetadataWatcher;
import io.continuum.broker.relay.EventBroker;
import io.continuum.broker.relay.api.RelayConfig;

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
        return () -> BrokerStatus.relaying(broker.status(), Instant.now(clock), context.config().clientId(),
                context.config().busUrl().toString(), new BrokerStatus.Metadata(metadata.isSynced(),
                        metadata.resourceCount(), metadata.publisherCount()));
    }

    @Override
    public void start() {
        metadata.start();
        broker.start();
    }

    @Override
    public boolean awaitReady(Duration timeout) throws InterruptedException {
        return metadata.awaitSynced(timeout);
    }

    @Override
    public CompletionStage<Throwable> died() {
        return broker.died();
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
