package io.continuum.broker.app.observe;

import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.helidon.common.media.type.MediaType;
import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.metrics.api.MeterRegistryFormatter;
import io.helidon.metrics.spi.MeterRegistryFormatterProvider;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * {@code GET /metrics}: the registry of {@link BrokerMetrics} in the exposition format the scraper asks for,
 * Prometheus text ({@code text/plain}, also when it sends no {@code Accept}) or OpenMetrics
 * ({@code application/openmetrics-text}, which Prometheus prefers when it may), written by Helidon's
 * Micrometer formatter. {@code ?name=} and {@code ?scope=} select families as Helidon's metrics endpoint
 * does; any other {@code Accept} gets {@code 406}.
 *
 * <p>Why not Helidon's {@code MetricsObserver}: its builder always resolves a default {@code MetricsConfig}
 * through Helidon's global service registry, which then builds Helidon's global {@code Config} (config
 * sources, environment, system properties) that the broker never reads; and its feature adds request
 * metrics and routes this port does not need. That was about a sixth of the main thread's work before the
 * first {@code /healthz} 200 (docs/benchmarks.md, "Start-up"). The formatter is found here with the JDK's
 * {@link ServiceLoader} instead: the same Helidon formatter, the same bytes.
 */
final class MetricsEndpoint implements Handler {
    /** How long a scrape that arrives before the registry exists waits for it (it normally waits milliseconds). */
    private static final long BIND_WAIT_SECONDS = 10;

    private final CountDownLatch bound = new CountDownLatch(1);
    private volatile Target target;

    /** The registry and the formatter that writes it, set once by {@link #bind}. */
    private record Target(BrokerMetrics metrics, MeterRegistryFormatterProvider formatters) {
    }

    private MetricsEndpoint() {
    }

    /**
     * An endpoint with no registry yet: the server starts, and {@code /healthz} answers, before the metrics
     * exist (R-MET asks for the server from start-up; building about 100 meters and the JVM binders is the
     * larger part of the work before it could otherwise answer). A scrape in that window waits for
     * {@link #bind}.
     *
     * @return the endpoint
     */
    static MetricsEndpoint unbound() {
        return new MetricsEndpoint();
    }

    /**
     * Serves these metrics from now on, and answers the scrapes that were waiting for them.
     *
     * @param metrics the metrics to serve
     * @throws IllegalStateException if already bound, or if no module provides a Prometheus formatter
     *                               (Helidon's Micrometer provider is missing from the module path)
     */
    void bind(BrokerMetrics metrics) {
        if (target != null) {
            throw new IllegalStateException("metrics are already bound");
        }
        for (MeterRegistryFormatterProvider provider : ServiceLoader.load(MeterRegistryFormatterProvider.class,
                                                                          MetricsEndpoint.class.getClassLoader())) {
            if (formatter(provider, metrics, MediaTypes.TEXT_PLAIN, List.of(), List.of()).isPresent()) {
                target = new Target(metrics, provider);
                bound.countDown();
                return;
            }
        }
        throw new IllegalStateException("no Prometheus text formatter for the metrics registry: "
                                        + "helidon-metrics-providers-micrometer is not on the module path");
    }

    @Override
    public void handle(ServerRequest req, ServerResponse res) throws InterruptedException {
        res.header(HeaderValues.CACHE_NO_CACHE);
        res.header(HeaderValues.X_CONTENT_TYPE_OPTIONS_NOSNIFF);
        // No Accept header: the first one, Prometheus text.
        Optional<MediaType> accepted = req.headers().bestAccepted(MediaTypes.TEXT_PLAIN,
                                                                  MediaTypes.APPLICATION_OPENMETRICS_TEXT);
        if (accepted.isEmpty()) {
            res.status(Status.NOT_ACCEPTABLE_406);
            res.send();
            return;
        }
        if (!bound.await(BIND_WAIT_SECONDS, TimeUnit.SECONDS)) {
            res.status(Status.SERVICE_UNAVAILABLE_503);
            res.send("metrics not available yet\n");
            return;
        }
        Target t = target;
        Optional<Object> body = formatter(t.formatters(), t.metrics(), accepted.get(),
                                          req.query().all("scope", List::of), req.query().all("name", List::of))
                .flatMap(MeterRegistryFormatter::format);
        if (body.isEmpty()) {
            // A selection that matches no family.
            res.status(Status.NOT_FOUND_404);
            res.send();
            return;
        }
        res.headers().contentType(accepted.get());
        res.send(body.get().toString());
    }

    private static Optional<MeterRegistryFormatter> formatter(MeterRegistryFormatterProvider provider,
                                                              BrokerMetrics metrics,
                                                              MediaType mediaType,
                                                              Iterable<String> scopes,
                                                              Iterable<String> names) {
        return provider.formatter(mediaType, metrics.config(), metrics.registry(),
                                  metrics.config().scoping().tagName(), scopes, names);
    }
}
