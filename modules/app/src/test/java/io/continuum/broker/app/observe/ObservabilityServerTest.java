package io.continuum.broker.app.observe;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.continuum.broker.app.config.ListenAddress;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import io.continuum.broker.relay.api.SessionState;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * R-MET: the observability server is up from start-up; /healthz is 200 while the process runs;
 * /readyz is 503 until the initial metadata sync and 200 from then on; /metrics is exactly there, in the
 * format the scraper asks for, and a scrape that comes before the metrics exist waits for them.
 */
class ObservabilityServerTest {
    private final HttpClient client = HttpClient.newHttpClient();
    private final AtomicBoolean synced = new AtomicBoolean();
    private final AtomicReference<SessionState> state = new AtomicReference<>(SessionState.SYNCING);
    private BrokerMetrics metrics;
    private ObservabilityServer server;

    @BeforeEach
    void start() {
        metrics = BrokerMetrics.create();
        server = ObservabilityServer.start(new ListenAddress("127.0.0.1", 0), synced::get,
                                           () -> new BrokerStatus(state.get(),
                                                                  Instant.parse("2026-01-01T00:00:00Z"),
                                                                  "broker-a", "https://router:443",
                                                                  new BrokerStatus.Metadata(synced.get(), 0, 0),
                                                                  Optional.empty()),
                                           "1.2.3");
        server.serveMetrics(metrics);
    }

    @AfterEach
    void stop() {
        server.close();
        metrics.close();
    }

    @Test
    void healthzIsOkWhileTheProcessRunsRegardlessOfReadiness() throws Exception {
        HttpResponse<String> r = get("/healthz");
        assertEquals(200, r.statusCode());
        assertEquals("ok\n", r.body());
    }

    @Test
    void readyzIs503UntilTheInitialSyncThen200AndStays200() throws Exception {
        HttpResponse<String> before = get("/readyz");
        assertEquals(503, before.statusCode());
        assertTrue(before.body().contains("metadata sync"), before.body());

        synced.set(true);
        assertEquals(200, get("/readyz").statusCode());

        // R-MET: 200 from then on, also during later API outages.
        synced.set(false);
        assertEquals(200, get("/readyz").statusCode());
    }

    @Test
    void readyzSessionIs200OnlyWhileARouterSessionIsWelcomedAndFollowsIt() throws Exception {
        synced.set(true);
        HttpResponse<String> syncing = get("/readyz/session");
        assertEquals(503, syncing.statusCode());
        assertEquals("not ready: no welcomed router session (syncing)\n", syncing.body());
        for (SessionState s : SessionState.values()) {
            state.set(s);
            assertEquals(s == SessionState.CONNECTED ? 200 : 503, get("/readyz/session").statusCode(), s.label());
        }
        state.set(SessionState.CONNECTED);
        assertEquals("ready\n", get("/readyz/session").body());
        state.set(SessionState.BACKOFF);
        assertEquals(503, get("/readyz/session").statusCode(), "not latched: a lost session is not ready again");
        assertEquals(200, get("/readyz").statusCode(), "/readyz stays the first sync's");
    }

    @Test
    void metricsIsServedAtExactlySlashMetricsInPrometheusText() throws Exception {
        HttpResponse<String> r = get("/metrics");
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("content-type").orElse("").startsWith("text/plain"),
                   r.headers().toString());
        assertTrue(r.body().contains("continuum_event_broker_session_attempts_total{"), r.body());
        assertEquals(404, get("/observe/metrics").statusCode());
        assertEquals(404, get("/observe/health").statusCode());
        assertEquals(404, get("/health").statusCode());
    }

    @Test
    void metricsIsOpenMetricsWhenTheScraperPrefersIt() throws Exception {
        // Prometheus 2's Accept header.
        HttpResponse<String> r = get("/metrics", "application/openmetrics-text;version=1.0.0;q=0.5,"
                + "application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2");
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("content-type").orElse("").startsWith("application/openmetrics-text"),
                   r.headers().toString());
        assertTrue(r.body().contains("continuum_event_broker_session_attempts_total{"), r.body());
        assertTrue(r.body().endsWith("# EOF\n"), "OpenMetrics ends with # EOF");
    }

    @Test
    void metricsRefusesAFormatItCannotWrite() throws Exception {
        assertEquals(406, get("/metrics", "application/json").statusCode());
        assertEquals(406, get("/metrics", "text/html").statusCode());
    }

    @Test
    void metricsSelectsFamiliesByName() throws Exception {
        HttpResponse<String> r = get("/metrics?name=continuum_event_broker_reconnects");
        assertEquals(200, r.statusCode());
        assertEquals(List.of("continuum_event_broker_reconnects_total"),
                     r.body().lines().filter(l -> !l.startsWith("#")).map(l -> l.substring(0, l.indexOf('{'))).toList(),
                     r.body());
    }

    @Test
    void aScrapeBeforeTheMetricsExistGetsThemOnceServedWhileHealthzAlreadyAnswers() throws Exception {
        try (BrokerMetrics later = BrokerMetrics.create();
             ObservabilityServer early = ObservabilityServer.start(new ListenAddress("127.0.0.1", 0), () -> false,
                     () -> BrokerStatus.withoutRelay(SessionState.SYNCING, Instant.EPOCH, "broker-a",
                                                                "https://router:443"),
                     "1.2.3")) {
            CompletableFuture<HttpResponse<String>> scrape = client.sendAsync(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + early.port() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            HttpResponse<String> health = client.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + early.port() + "/healthz")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode());
            assertFalse(scrape.isDone(), "the scrape is answered only once the metrics are served");

            early.serveMetrics(later);
            HttpResponse<String> r = scrape.get(30, TimeUnit.SECONDS);
            assertEquals(200, r.statusCode());
            assertTrue(r.body().contains("continuum_event_broker_build_info{"), r.body());
            assertThrows(IllegalStateException.class, () -> early.serveMetrics(later));
        }
    }

    @Test
    void statuszIsJsonFromTheSupplier() throws Exception {
        HttpResponse<String> r = get("/statusz");
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("content-type").orElse("").startsWith("application/json"));
        assertEquals("{\"version\":\"1.2.3\",\"state\":\"syncing\",\"state_since\":\"2026-01-01T00:00:00Z\","
                             + "\"client_id\":\"broker-a\",\"bus\":\"https://router:443\",\"limits\":null,"
                             + "\"open_streams\":0,\"metadata\":{\"synced\":false,\"resources\":0,\"publishers\":0}}\n",
                     r.body());
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
                           HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path, String accept) throws IOException, InterruptedException {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                                   .header("Accept", accept).build(),
                           HttpResponse.BodyHandlers.ofString());
    }
}
