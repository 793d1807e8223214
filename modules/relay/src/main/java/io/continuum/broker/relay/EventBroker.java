package io.continuum.broker.relay;

import java.time.Duration;
import java.util.HashSet;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.random.RandomGenerator;

import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.api.RelayStatus;
import io.continuum.broker.relay.dial.AddressFilter;
import io.continuum.broker.relay.dial.Connector;
import io.continuum.broker.relay.dial.DialResult;
import io.continuum.broker.relay.dial.NameResolver;
import io.continuum.broker.relay.dial.RefusalLog;
import io.continuum.broker.relay.dial.SocketSettings;
import io.continuum.broker.relay.dial.TargetCheck;
import io.continuum.broker.relay.dial.TargetResolver;
import io.continuum.broker.relay.dial.UpstreamDialer;
import io.continuum.broker.relay.loop.SessionLoop;
import io.continuum.broker.relay.session.BusSession;
import io.continuum.broker.relay.session.StreamRegistry;
import io.continuum.broker.relay.stream.TargetDialer;
import io.continuum.broker.relay.transport.BusConnector;
import io.continuum.broker.relay.transport.TransportSettings;

/**
 * The broker as a bus client: one session at a time to the router, one data stream per
 * subscription, every target checked against the metadata view and the address filter. This is
 * what the app starts; everything else in the module is internal.
 * <pre>{@code
 * EventBroker broker = EventBroker.create(config, view, metrics);
 * broker.start();            // waits for the view's initial sync, then dials the bus
 * ...
 * broker.shutdown();         // SIGTERM: draining, open streams finish until drain_deadline
 * }</pre>
 */
public final class EventBroker implements AutoCloseable {
    private final RelayConfig config;
    private final SessionLoop loop;
    private final StreamRegistry registry;

    private EventBroker(RelayConfig config, PublisherView view, RelayMetrics metrics, BusConnector connector,
                       RandomGenerator random, Connector upstreamConnector) {
        this.config = config;
        this.registry = new StreamRegistry(new RefusalLog());
        AddressFilter filter = new AddressFilter(config.allowedCidrs());
        RelayConfig.Timeouts t = config.timeouts();
        TargetResolver resolver = new TargetResolver(NameResolver.system(), t.dnsResolution());
        // One dialer (and its bound on concurrent dials) for the broker: at most one session runs at a time.
        UpstreamDialer dialer = new UpstreamDialer(filter, config.upstreamConnectTimeout(), t.upstreamConnectTotal(),
                t.maxConcurrentDials(), SocketSettings.DEFAULTS, upstreamConnector);
        TargetCheck check = new TargetCheck(new HashSet<>(config.dynamoNamespaces()), view, resolver, dialer);
        this.loop = new SessionLoop(config, view, connector, measured(check, metrics), metrics, registry, random,
                System::nanoTime, RelayInfo.agent());
    }

    /**
     * Creates a broker on the transport's default settings ({@link TransportSettings#defaults()}): one HTTP/2
     * connection of its own on the {@code h2} codec.
     *
     * @param config  configuration
     * @param view    the metadata view (R-SEC checks 2-4)
     * @param metrics metrics sink
     * @return broker, not started
     */
    public static EventBroker create(RelayConfig config, PublisherView view, RelayMetrics metrics) {
        return create(config, view, metrics, BusConnector.of(TransportSettings.defaults()),
                RandomGenerator.getDefault());
    }

    static EventBroker create(RelayConfig config, PublisherView view, RelayMetrics metrics, BusConnector connector,
                              RandomGenerator random) {
        return create(config, view, metrics, connector, random, Connector.SYSTEM);
    }

    /** Tests: the publisher connect step wrapped (to record concurrent dials), everything else real. */
    static EventBroker create(RelayConfig config, PublisherView view, RelayMetrics metrics, BusConnector connector,
                              RandomGenerator random, Connector upstreamConnector) {
        return new EventBroker(Objects.requireNonNull(config), Objects.requireNonNull(view),
                Objects.requireNonNull(metrics), Objects.requireNonNull(connector), Objects.requireNonNull(random),
                Objects.requireNonNull(upstreamConnector));
    }

    /**
     * Starts the session loop: waits for the metadata view's initial sync (R-BEH 1), then dials.
     */
    public void start() {
        loop.start();
    }

    /**
     * The session loop's death by an unexpected error (a bug, an {@link Error}): the broker cannot relay any more
     * and says so, so that its process exits and is restarted. Router, credential and API server outages never
     * complete it: they are retried for as long as the broker runs.
     *
     * @return completes with the error that ended the loop; never completes otherwise
     */
    public CompletionStage<Throwable> died() {
        return loop.died();
    }

    /**
     * Graceful shutdown with the configured {@code drain_deadline} (R-BEH 8).
     *
     * @throws InterruptedException when interrupted while draining
     */
    public void shutdown() throws InterruptedException {
        shutdown(config.drainDeadline());
    }

    /**
     * Graceful shutdown: {@code draining}, new subscribes refused, open streams run until they
     * close or {@code deadline} passes; returns once the session has ended.
     *
     * @param deadline how long open streams may still run
     * @throws InterruptedException when interrupted while draining
     */
    public void shutdown(Duration deadline) throws InterruptedException {
        loop.shutdown(deadline);
    }

    /**
     * Stops at once, without draining (a second signal).
     */
    @Override
    public void close() {
        loop.abort();
    }

    /**
     * Open data streams, for the {@code open_streams} gauge.
     *
     * @return count
     */
    public int openStreams() {
        return registry.openStreamCount();
    }

    /**
     * Bytes queued toward the router across the current session's data streams, charged as R-BUF 3 charges
     * them (chunk length plus 64 bytes each), for the {@code buffered_bytes} gauge; 0 without a session.
     *
     * @return bytes charged against the session's 64 MiB budget (R-BUF 2)
     */
    public long bufferedBytes() {
        BusSession s = loop.session();
        return s == null ? 0 : s.bufferedBytes();
    }

    /**
     * Whether a session is welcomed right now.
     *
     * @return true while welcomed
     */
    public boolean connected() {
        BusSession s = registry.currentSession();
        return s != null;
    }

    /**
     * A consistent-enough snapshot for {@code /statusz}. Never contains the credential.
     *
     * @return status
     */
    public RelayStatus status() {
        BusSession s = loop.session();
        return new RelayStatus(loop.state(),
                s == null ? null : s.sessionId(),
                s == null ? null : s.negotiatedLimits(),
                loop.nextAttemptAt(),
                s == null ? 0 : s.bufferedBytes(),
                registry.openStreams(),
                loop.recentEnds(),
                registry.recentRefusals());
    }

    /**
     * The checks and the dial, timed for {@code publisher_dial_duration_seconds}: from the start of the checks to
     * the connected socket ({@code connected}) or to {@code upstream_connect_failed} (resolution or every connect
     * attempt failed: {@code failed}). A target refused by a check, or a cancelled dial, is not a dial.
     */
    private static TargetDialer measured(TargetCheck check, RelayMetrics metrics) {
        return target -> {
            long started = System.nanoTime();
            DialResult result = check.checkAndConnect(target);
            switch (result) {
                case DialResult.Connected c -> metrics.publisherDialed(RelayMetrics.DialOutcome.CONNECTED,
                        Duration.ofNanos(System.nanoTime() - started));
                case DialResult.Refused r when r.code() == Code.UPSTREAM_CONNECT_FAILED ->
                        metrics.publisherDialed(RelayMetrics.DialOutcome.FAILED,
                                Duration.ofNanos(System.nanoTime() - started));
                default -> {
                    // refused by a check before dialing, or cancelled: not a dial
                }
            }
            return result;
        };
    }
}
