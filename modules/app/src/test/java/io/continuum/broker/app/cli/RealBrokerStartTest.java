package io.continuum.broker.app.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.continuum.broker.app.runtime.NotifySocket;
import io.continuum.broker.app.runtime.RelayRuntime;
import io.continuum.broker.app.runtime.SystemdNotify;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.kube.FakeKubeApi;
import io.continuum.broker.testing.kube.Fault;
import io.continuum.broker.testing.kube.RequestKind;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.ServerIdentity;
import io.continuum.broker.testing.secrets.Secrets;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.Config;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * R-CFG fails closed, and what it accepts starts: the real broker (the relay runtime against an
 * in-process TLS router and Kubernetes API) with every duration at its largest accepted value, and
 * with the variables the kubelet injects for the project's metrics Services, reaches a welcomed
 * session and shuts down cleanly.
 */
class RealBrokerStartTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String CREDENTIAL = Secrets.register("start-test-credential-0123456789abcdef");

    @TempDir
    Path dir;
    private InProcessRouter router;
    private FakeKubeApi kube;
    private ApiClient apiClient;
    private Path config;
    private String busUrl;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void setUp() throws Exception {
        EphemeralPki pki = EphemeralPki.create();
        ServerIdentity server = pki.localhostServer();
        router = InProcessRouter.builder().tls(server.key(), List.of(server.certificate())).credential(CREDENTIAL)
                .start();
        kube = FakeKubeApi.builder().build();
        apiClient = Config.fromConfig(kube.kubeconfig().toString());
        Files.write(dir.resolve("ca.pem"), pki.caPem());
        Files.writeString(dir.resolve("credential"), CREDENTIAL + "\n");
        config = dir.resolve("config.yaml");
    }

    @AfterEach
    void tearDown() {
        Secrets.assertAbsent("the broker's stdout", out.toString(StandardCharsets.UTF_8));
        Secrets.assertAbsent("the broker's log", err.toString(StandardCharsets.UTF_8));
        router.close();
        kube.close();
    }

    private void writeConfig(String... extra) throws Exception {
        Files.writeString(config, String.join("\n", List.of(
                "bus_url: " + (busUrl != null ? busUrl : router.url()),
                "ca_file: " + dir.resolve("ca.pem"),
                "client_id: start-test",
                "credential_file: " + dir.resolve("credential"),
                "kubernetes_namespace: ns",
                "dynamo_namespaces: [dynamo]",
                "metrics_listen: 127.0.0.1:0",
                String.join("\n", extra),
                "")));
    }

    private Cli cli(Map<String, String> env) {
        return cli(env, apiClient, () -> {
            // "SIGTERM" once the router has welcomed a session of this broker.
            RouterSession session = router.awaitSession(WAIT);
            assertEquals("start-test", session.hello().clientId());
            return 15;
        });
    }

    private Cli cli(Map<String, String> env, ApiClient api, Cli.ShutdownWait wait) {
        return Cli.builder()
                .environment(env)
                .serviceAccountNamespaceFile(dir.resolve("no-sa"))
                .out(new PrintStream(out, true, StandardCharsets.UTF_8))
                .err(new PrintStream(err, true, StandardCharsets.UTF_8))
                .runtimeFactory(ctx -> new RelayRuntime(ctx, api))
                .shutdownWait(wait)
                .build();
    }

    /** A "SIGTERM" once the broker's log has {@code count} lines with {@code fragment}: until then it runs. */
    private Cli.ShutdownWait afterLogLines(String fragment, int count) {
        return () -> {
            await(() -> log().lines().filter(l -> l.contains(fragment)).count() >= count,
                    count + " log lines with " + fragment);
            return 15;
        };
    }

    /**
     * Issue 56 item 1, the side that must not exit: outages are retried for as long as the broker runs. The real
     * broker meets one and keeps at it (each attempt logged) until the "SIGTERM", then drains and exits 0; it never
     * exits 70, the code of a session loop that died (CliTest pins that side).
     */
    private void ridesOut(ApiClient api, String fragment) {
        assertEquals(0, cli(Map.of(), api, afterLogLines(fragment, 3)).run("--config", config.toString()), log());
        assertTrue(log().contains("event=stopped"), log());
        assertFalse(log().contains("event=runtime_died"), log());
    }

    @Test
    @Timeout(120)
    void aRouterThatRefusesTheCredentialNeverEndsTheProcess() throws Exception {
        Files.writeString(dir.resolve("credential"), "a-credential-the-router-refuses-0123456789\n");
        writeConfig("reconnect_backoff:", "  initial: 100ms", "  max: 200ms");
        ridesOut(apiClient, "reason=refused");
    }

    @Test
    @Timeout(120)
    void aRouterThatIsDownNeverEndsTheProcess() throws Exception {
        busUrl = "https://localhost:" + closedPort();
        writeConfig("reconnect_backoff:", "  initial: 100ms", "  max: 200ms");
        ridesOut(apiClient, "reason=connect_failed");
    }

    @Test
    @Timeout(120)
    void anApiServerThatIsDownNeverEndsTheProcess() throws Exception {
        writeConfig();
        ridesOut(Config.fromUrl("http://127.0.0.1:" + closedPort()), "event=metadata_watch_");
    }

    /**
     * Issue 57 item 3: under systemd ({@code Type=notify}, {@code $NOTIFY_SOCKET} set) the broker says READY=1
     * when {@code /readyz} would answer 200, after the first metadata sync and not before (the API server's first
     * list hangs until released), with a status line meanwhile; and STOPPING=1 when SIGTERM starts the drain.
     */
    @Test
    @Timeout(120)
    void underSystemdReadyComesWithTheFirstSyncAndStoppingWithTheDrain() throws Exception {
        writeConfig();
        kube.inject(RequestKind.LIST, new Fault.Hang());
        List<String> received = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (NotifySocket manager = NotifySocket.bind(dir.resolve("notify"))) {
            Cli.ShutdownWait wait = () -> {
                String first = manager.receive(WAIT).orElseThrow(() -> new AssertionError("no notification\n" + log()));
                received.add(first);
                kube.awaitRequest(r -> r.kind() == RequestKind.LIST, WAIT); // the hung first list: not synced
                assertEquals("STATUS=waiting for the first DynamoWorkerMetadata sync", first);
                assertEquals("503", readyz(), "not ready while the first list hangs");
                kube.releaseHangs();
                String ready = manager.receive(WAIT).orElseThrow(() -> new AssertionError("no READY=1\n" + log()));
                received.add(ready);
                assertEquals("200", readyz(), "READY=1 comes when /readyz answers 200");
                return 15;
            };
            int status = cli(Map.of(SystemdNotify.SOCKET_VARIABLE, manager.address()), apiClient, wait)
                    .run("--config", config.toString());
            assertEquals(0, status, log());
            received.add(manager.receive(WAIT).orElseThrow(() -> new AssertionError("no STOPPING=1")));
        }
        assertEquals(List.of("STATUS=waiting for the first DynamoWorkerMetadata sync",
                "READY=1\nSTATUS=ready: the first DynamoWorkerMetadata sync is done",
                "STOPPING=1\nSTATUS=draining"), received, log());
        assertTrue(log().contains("event=systemd_notified state=\"READY=1\""), log());
    }

    private String readyz() throws InterruptedException {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("event=started metrics_port=(\\d+)").matcher(log());
        assertTrue(m.find(), log());
        try {
            java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + m.group(1)
                            + "/readyz")).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            return Integer.toString(r.statusCode());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private String log() {
        return err.toString(StandardCharsets.UTF_8);
    }

    /** --check-config accepts it, and then the real broker starts, is welcomed, and exits 0. */
    private void checksAndStarts(Map<String, String> env) {
        assertEquals(0, cli(env).run("--config", config.toString(), "--check-config"),
                     out.toString(StandardCharsets.UTF_8) + log());
        assertEquals(0, cli(env).run("--config", config.toString()), log());
        assertTrue(log().contains("event=runtime_started"), log());
        assertTrue(log().contains("event=stopped"), log());
    }

    @Test
    @Timeout(120)
    void everyDurationAtItsLargestAcceptedValueStarts() throws Exception {
        writeConfig("reconnect_backoff:", "  initial: 1h", "  max: 1h", "drain_deadline: 10m",
                    "upstream_connect_timeout: 10s", "bus_connect_timeout: 1h");
        checksAndStarts(Map.of());
        assertTrue(log().contains("bus_connect_timeout=1h"), log());
        // One more millisecond anywhere is refused by --check-config (ConfigLoaderTest.DurationBounds):
        err.reset();
        writeConfig("bus_connect_timeout: 3600001ms");
        assertEquals(1, cli(Map.of()).run("--config", config.toString(), "--check-config"));
        assertTrue(log().contains("bus_connect_timeout: must be at most 1h, got \"3600001ms\""), log());
    }

    /** The kubelet's variables for a Service named NAME with one TCP port named {@code metrics}. */
    static Map<String, String> serviceLinks(String name, String ip, int port) {
        String p = name.toUpperCase(java.util.Locale.ROOT).replace('-', '_');
        String url = "tcp://" + (ip.contains(":") ? "[" + ip + "]" : ip) + ":" + port; // Go's net.JoinHostPort
        return Map.of(
                p + "_SERVICE_HOST", ip,
                p + "_SERVICE_PORT", Integer.toString(port),
                p + "_SERVICE_PORT_METRICS", Integer.toString(port),
                p + "_PORT", url,
                p + "_PORT_" + port + "_TCP", url,
                p + "_PORT_" + port + "_TCP_PROTO", "tcp",
                p + "_PORT_" + port + "_TCP_PORT", Integer.toString(port),
                p + "_PORT_" + port + "_TCP_ADDR", ip);
    }

    @Test
    @Timeout(120)
    void theKubeletsServiceLinkVariablesForTheMetricsServicesDoNotStopTheBroker() throws Exception {
        writeConfig();
        Map<String, String> env = new HashMap<>();
        env.putAll(serviceLinks("continuum-event-broker-metrics", "10.96.12.7", 9464));
        env.putAll(serviceLinks("continuum-event-broker-metrics-a", "10.96.12.8", 9464));
        env.putAll(serviceLinks("continuum-event-broker", "fd00:96::12", 9464)); // a Service named as the app
        env.putAll(serviceLinks("kubernetes", "10.96.0.1", 443));
        checksAndStarts(env);
    }

    @Test
    void aMistypedFieldVariableIsStillRefused() throws Exception {
        writeConfig();
        Map<String, String> env = new HashMap<>(serviceLinks("continuum-event-broker-metrics", "10.96.12.7", 9464));
        env.put("CONTINUUM_EVENT_BROKER_DRAIN_DEADLIN", "5s");
        env.put("CONTINUUM_EVENT_BROKER_METRICS_PORT", "9464"); // the kubelet writes tcp://addr:port here
        assertEquals(1, cli(env).run("--config", config.toString()));
        assertTrue(log().contains("environment variable CONTINUUM_EVENT_BROKER_DRAIN_DEADLIN: (environment): names no"
                                  + " configuration field"), log());
        assertTrue(log().contains("environment variable CONTINUUM_EVENT_BROKER_METRICS_PORT: (environment): names no"
                                  + " configuration field"), log());
        assertTrue(!log().contains("SERVICE_HOST"), log());
    }
}
