package io.continuum.broker.app.observe;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.continuum.broker.app.config.ListenAddress;

import io.continuum.broker.relay.api.SessionState;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.ServerResponse;

/**
 * The always-on HTTP server on {@code metrics_listen} (R-MET): exactly {@code /metrics}
 * (Prometheus text or OpenMetrics, {@link MetricsEndpoint}), {@code /healthz} (200 while the process runs, never tied to the router or the
 * API server), {@code /readyz} (503 until the metadata view's initial sync, 200 from then on, also
 * during later API outages) and {@code /statusz} (a small JSON snapshot). Nothing here ever sees the
 * credential. It speaks plain HTTP/1.x as health checkers and scrapers expect ({@link PlainHttp1}).
 */
public final class ObservabilityServer implements AutoCloseable {
    private final WebServer server;
    private final MetricsEndpoint metrics;
    private final String version;

    private ObservabilityServer(WebServer server, MetricsEndpoint metrics, String version) {
        this.server = server;
        this.metrics = metrics;
        this.version = version;
    }

    /**
     * Starts the server. {@code /healthz}, {@code /readyz} and {@code /statusz} answer at once;
     * {@code /metrics} once {@link #serveMetrics} gave it the registry (a scrape that comes earlier waits).
     *
     * @param listen  address to bind
     * @param ready   true once the metadata view completed its initial sync; once seen true,
     *                {@code /readyz} stays 200
     * @param status  status snapshot supplier
     * @param version broker version shown in {@code /statusz}
     * @return the started server
     * @throws IllegalStateException if the address cannot be bound
     */
    public static ObservabilityServer start(ListenAddress listen,
                                            BooleanSupplier ready,
                                            Supplier<BrokerStatus> status,
                                            String version) {
        Objects.requireNonNull(ready);
        Objects.requireNonNull(status);
        Objects.requireNonNull(version);
        AtomicBoolean readyLatch = new AtomicBoolean();
        MetricsEndpoint metricsEndpoint = MetricsEndpoint.unbound();
        WebServer server = WebServer.builder()
                .featuresDiscoverServices(false)
                // Plain HTTP/1.x only (PlainHttp1): Connection: close closes, HTTP/1.0 is answered.
                .protocolsDiscoverServices(false)
                .addConnectionSelector(PlainHttp1.create())
                .host(listen.host())
                .port(listen.port())
                .routing(r -> r
                        .get("/metrics", metricsEndpoint)
                        .get("/healthz", (req, res) -> text(res, Status.OK_200, "ok\n"))
                        .get("/readyz", (req, res) -> {
                            if (readyLatch.get() || ready.getAsBoolean()) {
                                readyLatch.set(true);
                                text(res, Status.OK_200, "ready\n");
                            } else {
                                text(res, Status.SERVICE_UNAVAILABLE_503,
                                     "not ready: initial metadata sync not complete\n");
                            }
                        })
                        // Opt-in readiness (docs/deployment.md): Ready only while a router session is welcomed,
                        // for a PodDisruptionBudget or `helm --wait` that should count brokers serving the router.
                        // Not latched, unlike /readyz: it follows the session.
                        .get("/readyz/session", (req, res) -> {
                            SessionState state = status.get().state();
                            if (state == SessionState.CONNECTED) {
                                text(res, Status.OK_200, "ready\n");
                            } else {
                                text(res, Status.SERVICE_UNAVAILABLE_503,
                                     "not ready: no welcomed router session (" + state.label() + ")\n");
                            }
                        })
                        .get("/statusz", (req, res) -> {
                            res.header(HeaderValues.CONTENT_TYPE_JSON);
                            res.header(HeaderValues.CACHE_NO_CACHE);
                            res.send(status.get().toJson(version) + "\n");
                        }))
                .build()
                .start();
        if (!server.isRunning()) {
            // Helidon logs a bind failure and returns a stopped server instead of throwing.
            throw new IllegalStateException("observability server could not start on " + listen);
        }
        return new ObservabilityServer(server, metricsEndpoint, version);
    }

    /**
     * Serves these metrics at {@code /metrics} from now on, with {@code build_info} naming this broker.
     *
     * @param brokerMetrics the process's metrics
     * @throws IllegalStateException if metrics are already served, or Helidon's Micrometer formatter is
     *                               missing from the module path
     */
    public void serveMetrics(BrokerMetrics brokerMetrics) {
        brokerMetrics.buildInfo(version);
        metrics.bind(brokerMetrics);
    }

    /**
     * The bound port (the real one when {@code metrics_listen} asked for port 0).
     *
     * @return port
     */
    public int port() {
        return server.port();
    }

    /**
     * Stops the server.
     */
    @Override
    public void close() {
        server.stop();
    }

    private static void text(ServerResponse res, Status status, String body) {
        res.status(status);
        res.header(HeaderValues.CONTENT_TYPE_TEXT_PLAIN);
        res.header(HeaderValues.CACHE_NO_CACHE);
        res.send(body);
    }
}
