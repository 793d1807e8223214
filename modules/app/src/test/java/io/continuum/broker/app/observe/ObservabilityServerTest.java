package io.continuum.broker.app.observe;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import io.continuum.broker.app.config.ListenAddress;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import io.continuum.broker.relay.api.SessionState;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * R-MET: the observability server is up from start-up; /healthz is 200 while the process runs;
 * /readyz is 503 until the initial metadata sync and 200 from then on; /metrics is exactly there.
 */
class ObservabilityServerTest {
    private final HttpClient client = HttpClient.newHttpClient();
    private final AtomicBoolean synced = new AtomicBoolean();
    private BrokerMetrics metrics;
    private ObservabilityServer server;

    @BeforeEach
    void start() {
        metrics = BrokerMetrics.create();
        server = ObservabilityServer.start(new ListenAddress("127.0.0.1", 0), metrics, synced::get,
                                           () -> new BrokerStatus(SessionState.SYNCING,
                                                                  Instant.parse("2026-01-01T00:00:00Z"),
                                                                  "broker-a", "https://router:443",
                                                                  Optional.empty(), 0, synced.get(), 0, 0),
                                           "1.2.3");
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
}
