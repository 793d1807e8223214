package io.continuum.broker.app.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.continuum.broker.app.config.BrokerConfig;
import io.continuum.broker.app.observe.BrokerMetrics;
import io.continuum.broker.app.observe.BrokerStatus;
import io.continuum.broker.app.observe.CaBundleExpiry;
import io.continuum.broker.app.secrets.CaBundle;
import io.continuum.broker.app.secrets.CaBundleSource;
import io.continuum.broker.metadata.MetadataMetrics;
import io.continuum.broker.metadata.MetadataWatcher;
import io.continuum.broker.metadata.RestartReason;
import io.continuum.broker.metadata.SkipReason;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.SessionLimits;
import io.continuum.broker.relay.EventBroker;
import io.continuum.broker.relay.RelayConfig;
import io.continuum.broker.relay.RelayMetrics;

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
                .metrics(new MetadataMetrics() {
                    @Override
                    public void skipped(SkipReason reason) {
                        metrics.metadataSkipped(reason, 1);
                    }

                    @Override
                    public void watchRestarted(RestartReason reason) {
                        metrics.watchRestart(reason);
                    }

                    @Override
                    public void listed(Duration elapsed) {
                        metrics.metadataListed(elapsed);
                    }
                });
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
                .caBundle(context.caBundle().map(RelayRuntime::pemReader).orElse(null))
                .credential(() -> context.credential().load().reveal())
                .clientId(config.clientId())
                .kubernetesNamespace(config.kubernetesNamespace())
                .dynamoNamespaces(config.dynamoNamespaces())
                .allowedCidrs(config.allowedCidrs())
                .reconnectBackoff(config.reconnectBackoff().initial(), config.reconnectBackoff().max())
                .drainDeadline(config.drainDeadline())
                .busConnectTimeout(config.busConnectTimeout())
                .upstreamConnectTimeout(config.upstreamConnectTimeout())
                .build();
        this.broker = EventBroker.create(relayConfig, metadata, relayMetrics(metrics));
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

    /** Re-reads and re-validates the CA bundle at every session attempt, and hands the relay PEM. */
    private static Callable<byte[]> pemReader(CaBundleSource source) {
        return () -> {
            CaBundle bundle = source.load();
            StringBuilder pem = new StringBuilder();
            Base64.Encoder b64 = Base64.getMimeEncoder(64, new byte[] {'\n'});
            for (X509Certificate c : bundle.certificates()) {
                try {
                    pem.append("-----BEGIN CERTIFICATE-----\n").append(b64.encodeToString(c.getEncoded()))
                            .append("\n-----END CERTIFICATE-----\n");
                } catch (CertificateEncodingException e) {
                    throw new IOException("cannot encode a certificate of " + source.path(), e);
                }
            }
            return pem.toString().getBytes(StandardCharsets.US_ASCII);
        };
    }

    private static RelayMetrics relayMetrics(BrokerMetrics metrics) {
        return new RelayMetrics() {
            @Override
            public void sessionAttempt(AttemptResult result) {
                metrics.sessionAttempt(result);
            }

            @Override
            public void sessionEnded(EndReason reason) {
                metrics.sessionEnded(reason);
            }

            @Override
            public void reconnect() {
                metrics.reconnect();
            }

            @Override
            public void subscribeOpened() {
                // The relay reports the timed variant below; a count without a time still counts.
                metrics.subscribeOpened();
            }

            @Override
            public void subscribeOpened(Duration sinceSubscribe) {
                metrics.subscribeOpened(sinceSubscribe);
            }

            @Override
            public void busConnected(Duration sinceAttemptStart) {
                metrics.busConnected(sinceAttemptStart);
            }

            @Override
            public void publisherDialed(boolean connected, Duration elapsed) {
                metrics.publisherDialed(connected ? BrokerMetrics.DialResult.CONNECTED : BrokerMetrics.DialResult.FAILED,
                                        elapsed);
            }

            @Override
            public void routerError(Code code, boolean terminal) {
                metrics.routerError(code);
            }

            @Override
            public void subscribeRefused(Code code) {
                metrics.subscribeRefused(code);
            }

            @Override
            public void streamNearBudget() {
                metrics.streamNearBudget();
            }

            @Override
            public void streamClosed(Code code) {
                metrics.streamClosed(code);
            }

            @Override
            public void relayed(Direction direction, long bytes) {
                metrics.relayedBytes(direction, bytes);
            }
        };
    }

    @Override
    public BooleanSupplier ready() {
        return metadata::isSynced;
    }

    @Override
    public Supplier<BrokerStatus> status() {
        return () -> {
            io.continuum.broker.relay.BrokerStatus s = broker.status();
            SessionLimits l = s.limits();
            return new BrokerStatus(state(s), Instant.now(clock), context.config().clientId(),
                    context.config().busUrl().toString(),
                    l == null ? Optional.empty() : Optional.of(new BrokerStatus.Limits(
                            l.heartbeatInterval().toMillis(), l.idleTimeout().toMillis(), l.maxStreams(),
                            l.maxStreamBufferBytes(), l.maxFrameBytes())),
                    s.openStreams().size(), metadata.isSynced(), metadata.resourceCount(), metadata.publisherCount(),
                    details(s));
        };
    }

    private static BrokerStatus.Details details(io.continuum.broker.relay.BrokerStatus s) {
        java.util.Map<String, Long> refusals = new java.util.TreeMap<>();
        for (io.continuum.broker.relay.BrokerStatus.Refusal r : s.recentRefusals()) {
            refusals.merge(r.code().wire(), 1L, Long::sum);
        }
        return new BrokerStatus.Details(s.sessionId(), s.nextAttemptAt(), s.bufferedBytes(),
                s.openStreams().stream().map(o -> new BrokerStatus.Stream(o.streamId(), o.target(), o.age().toMillis(),
                        o.bytesToRouter(), o.bytesToPublisher(), o.bufferedBytes())).toList(),
                s.recentEnds().stream().map(e -> new BrokerStatus.End(e.at(), e.result().label(), e.reason().wire()))
                        .toList(),
                refusals);
    }

    private static BrokerStatus.SessionState state(io.continuum.broker.relay.BrokerStatus s) {
        if ("draining".equals(s.sessionState())) {
            return BrokerStatus.SessionState.DRAINING;
        }
        if ("welcomed".equals(s.sessionState())) {
            return BrokerStatus.SessionState.CONNECTED;
        }
        return switch (s.loopState()) {
            case "new", "waiting_for_sync" -> BrokerStatus.SessionState.SYNCING;
            case "backing_off" -> BrokerStatus.SessionState.BACKOFF;
            case "stopped" -> BrokerStatus.SessionState.IDLE;
            default -> BrokerStatus.SessionState.CONNECTING;
        };
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
