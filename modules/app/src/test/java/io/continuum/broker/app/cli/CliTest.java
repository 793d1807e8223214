package io.continuum.broker.app.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.continuum.broker.app.config.BrokerConfig;
import io.continuum.broker.app.observe.BrokerStatus;
import io.continuum.broker.app.runtime.BrokerRuntime;
import io.continuum.broker.app.runtime.IdleRuntime;
import io.continuum.broker.testing.logs.Logfmt;
import io.continuum.broker.testing.secrets.Secrets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static io.continuum.broker.app.testsupport.TestCertificates.cert;
import static io.continuum.broker.app.testsupport.TestCertificates.pem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * R-CFG command line: {@code continuum-event-broker [--config PATH] [--check-config]}, --help,
 * --version, usage errors, exit codes; the running shell serves health, readiness, metrics and
 * status and never shows the credential (R-SEC-14).
 */
class CliTest {
    private static final String SECRET = Secrets.register("Zq9-very-secret-bearer-credential-0123456789");
    private static final Instant NOW = Instant.parse("2026-06-01T00:00:00Z");

    @TempDir
    Path dir;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final Map<String, String> env = new HashMap<>(Map.of("POD_NAMESPACE", "gpu-serving"));
    private Path config;
    private Path credential;
    private Path ca;

    @BeforeEach
    void files() throws Exception {
        credential = dir.resolve("credential");
        Files.writeString(credential, SECRET + "\n");
        ca = dir.resolve("ca.pem");
        Files.writeString(ca, pem(cert("CN=Router CA", NOW.plusSeconds(86_400 * 10))));
        config = dir.resolve("config.yaml");
        Files.writeString(config, """
                bus_url: https://router.example.com
                client_id: broker-a
                credential_file: %s
                ca_file: %s
                dynamo_namespaces: [dynamo]
                metrics_listen: 127.0.0.1:0
                """.formatted(credential, ca));
    }

    @AfterEach
    void noCredentialAnywhere() {
        // The CLI's own streams: the test-wide scan sees System.out/err and JUL, not these buffers.
        Secrets.assertAbsent("the CLI's stdout", out());
        Secrets.assertAbsent("the CLI's stderr and log lines", err());
    }

    private Cli.Builder cli() {
        return Cli.builder()
                .environment(env)
                .serviceAccountNamespaceFile(dir.resolve("no-sa"))
                .defaultConfigPath(dir.resolve("etc/config.yaml"))
                .out(new PrintStream(out, true, StandardCharsets.UTF_8))
                .err(new PrintStream(err, true, StandardCharsets.UTF_8))
                .clock(Clock.fixed(NOW, ZoneOffset.UTC))
                .shutdownWait(() -> {
                    throw new AssertionError("must not run the broker");
                });
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    /** The broker's log on stderr, every line parsed as strict logfmt (a line that is not fails the test). */
    private List<Map<String, String>> events() {
        String log = err();
        // Only complete lines: a probe may read while the broker is writing one.
        return log.substring(0, log.lastIndexOf('\n') + 1).lines().map(Logfmt::parse).toList();
    }

    /** The first event of that name. */
    private Map<String, String> event(String name) {
        return events().stream().filter(e -> name.equals(e.get("event"))).findFirst()
                .orElseThrow(() -> new AssertionError("no event=" + name + " in:\n" + err()));
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void helpPrintsUsageAndExits0() {
        assertEquals(0, cli().build().run("--help"));
        assertTrue(out().startsWith("usage: continuum-event-broker [--config PATH] [--check-config]"), out());
        assertTrue(out().contains("Exit status:"));
    }

    @Test
    void versionPrintsTheBuildVersion() {
        assertEquals(0, cli().build().run("--version"));
        assertEquals("continuum-event-broker " + Cli.version() + System.lineSeparator(), out());
        assertFalse(Cli.version().contains("${"), "version.properties must be filtered");
        assertFalse(Cli.version().equals("unknown"));
    }

    @Test
    void usageErrorsExit2() {
        for (List<String> args : List.of(List.of("--bogus"), List.of("--config"), List.of("extra"),
                                         List.of("--config", "a", "--config", "b"), List.of("--config="))) {
            err.reset();
            assertEquals(2, cli().build().run(args.toArray(String[]::new)), args.toString());
            assertTrue(err().contains(Cli.USAGE), err());
        }
        err.reset();
        cli().build().run("--bogus");
        assertTrue(err().startsWith("continuum-event-broker: unknown option '--bogus'"), err());
    }

    @Test
    void checkConfigOfAValidSetUpExits0AndReportsCredentialAndCertificates() {
        assertEquals(0, cli().build().run("--config", config.toString(), "--check-config"));
        assertEquals(List.of("configuration " + config + ": ok",
                             "credential from file " + credential + ": ok (" + SECRET.length() + " bytes)",
                             "CA bundle " + ca + ": ok (1 certificate)",
                             "  subject=\"CN=Router CA\" not_after=2026-06-11T00:00:00Z"),
                     out().lines().filter(l -> !l.contains(" = ")).toList());
        assertEquals("", err());
    }

    @Test
    void checkConfigShowsEveryEffectiveValueAndWhereItCameFrom() {
        env.put("CONTINUUM_EVENT_BROKER_LOG_LEVEL", "debug");
        assertEquals(0, cli().build().run("--config", config.toString(), "--check-config"));
        List<String> settings = out().lines().filter(l -> l.contains(" = ")).toList();
        assertEquals(io.continuum.broker.app.config.Fields.ALL.size() - 1, settings.size(), out());
        assertTrue(settings.contains("  client_id = broker-a  (" + config + ":2)"), out());
        assertTrue(settings.contains("  credential = file " + credential + " (value redacted)  (" + config + ":3)"),
                   out());
        assertTrue(settings.contains("  kubernetes_namespace = gpu-serving  ($POD_NAMESPACE)"), out());
        assertTrue(settings.contains("  drain_deadline = 25s  (default)"), out());
        assertTrue(settings.contains("  log_level = debug  (environment variable CONTINUUM_EVENT_BROKER_LOG_LEVEL)"),
                   out());
    }

    @Test
    void checkConfigListsEveryProblemAndExits1() throws Exception {
        Files.writeString(config, """
                bus_url: http://router
                client_id: broker-a
                dynamo_namespaces: [dynamo]
                surprise: 1
                """);
        assertEquals(1, cli().build().run("--check-config", "--config=" + config));
        List<String> lines = err().lines().toList();
        assertEquals("continuum-event-broker: configuration check failed (3 problems):", lines.get(0));
        assertTrue(lines.get(1).startsWith("  " + config + ":4: surprise: unknown field"), lines.get(1));
        assertTrue(lines.get(2).startsWith("  " + config + ":1: bus_url: must use https://"), lines.get(2));
        assertEquals("  credential and CA bundle not checked: the configuration is invalid", lines.get(3));
    }

    @Test
    void checkConfigReportsCredentialAndCaProblemsTogether() throws Exception {
        Files.writeString(credential, "short");
        Files.writeString(ca, "not a pem");
        assertEquals(1, cli().build().run("--config", config.toString(), "--check-config"));
        assertEquals(List.of("continuum-event-broker: configuration check failed (2 problems):",
                             "  credential from file " + credential + " is 5 bytes, needs 32..512",
                             "  CA bundle " + ca + " holds no PEM CERTIFICATE block"),
                     err().lines().toList());
    }

    @Test
    void checkConfigUsesTheDefaultPath() {
        // The default itself, and the CLI reading it when --config is absent (pointed into this test's own
        // directory: a machine with the package installed has the real file).
        assertEquals(java.nio.file.Path.of("/etc/continuum-event-broker/config.yaml"), BrokerConfig.DEFAULT_PATH);
        assertEquals(1, cli().build().run("--check-config"));
        assertTrue(err().contains(dir.resolve("etc/config.yaml") + ": (file): does not exist"), err());
    }

    @Test
    void runningRefusesToStartOnAnInvalidCredential() throws Exception {
        Files.writeString(credential, SECRET.substring(0, 20));
        assertEquals(1, cli().build().run("--config", config.toString()));
        assertTrue(event("startup_failed").get("problem").contains("is 20 bytes, needs 32..512"), err());
        assertFalse(err().contains(SECRET.substring(0, 20)));
    }

    @Test
    void anOccupiedMetricsPortIsAStartUpFailureExit3() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1,
                                                                     java.net.InetAddress.getByName("127.0.0.1"))) {
            Files.writeString(config, Files.readString(config)
                    .replace("127.0.0.1:0", "127.0.0.1:" + taken.getLocalPort()));
            assertEquals(3, cli().build().run("--config", config.toString()));
            assertEquals("cannot serve metrics_listen 127.0.0.1:" + taken.getLocalPort(),
                    event("startup_failed").get("problem"), err());
            assertTrue(event("startup_failed").get("error_class").startsWith("java."), err());
        }
    }

    @Test
    void runningServesObservabilityUntilShutdownThenExits0() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        StringBuilder seen = new StringBuilder();
        int status = cli().shutdownWait(() -> {
                    // Called once the server is up and the runtime started: probe it, then "receive" SIGTERM.
                    String base = "http://127.0.0.1:" + event("started").get("metrics_port");
                    for (String path : List.of("/healthz", "/readyz", "/metrics", "/statusz")) {
                        try {
                            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + path)).build(),
                                                               HttpResponse.BodyHandlers.ofString());
                            seen.append(path).append(' ').append(r.statusCode()).append('\n');
                            Secrets.assertAbsent("GET " + path, r.body());
                        } catch (java.io.IOException e) {
                            throw new AssertionError(e);
                        }
                    }
                    return 15;
                })
                .build()
                .run("--config", config.toString());
        assertEquals(0, status);
        // The idle runtime never syncs metadata: not ready, but healthy.
        assertEquals("/healthz 200\n/readyz 503\n/metrics 200\n/statusz 200\n", seen.toString());
        assertEquals("file " + credential + " (value redacted)", event("config_loaded").get("credential"));
        assertEquals("15", event("shutdown_requested").get("signal"));
        event("stopped");
        // Every line parses as strict logfmt with the fixed leading fields.
        for (Map<String, String> e : events()) {
            assertEquals(List.of("ts", "level", "logger", "event"), List.copyOf(e.keySet()).subList(0, 4), e.toString());
        }
    }

    @Test
    void healthzAnswersWhileTheRuntimeIsStillBeingBuilt() throws Exception {
        // R-MET: the server is up from start-up and /healthz never waits for the Kubernetes client or the
        // relay. The factory runs after the server started: it probes it before returning the runtime.
        StringBuilder seen = new StringBuilder();
        int status = cli()
                .runtimeFactory(context -> {
                    probe(seen, "/healthz", "/readyz", "/statusz");
                    return new io.continuum.broker.app.runtime.IdleRuntime(context);
                })
                .shutdownWait(() -> 15)
                .build()
                .run("--config", config.toString());
        assertEquals(0, status);
        assertEquals("/healthz 200 ok\n/readyz 503\n/statusz 200 \"state\":\"syncing\"\n", seen.toString());
        List<String> names = events().stream().map(e -> e.get("event")).toList();
        assertTrue(names.indexOf("started") >= 0 && names.indexOf("started") < names.indexOf("runtime_started"), err());
    }

    /**
     * Issue 56 item 1: a runtime that dies (the relay's session loop ended by an unexpected error) ends the process
     * with 70, so Kubernetes and systemd restart it, instead of a process that stays Live and Ready and relays
     * nothing. The shutdown wait is let go; the runtime is shut down (nothing to drain) first. SessionLoopDeathTest
     * pins what completes {@code died()}, RealBrokerStartTest that outages never do.
     */
    @Test
    @Timeout(60) // before: the broker waited for a signal that never came
    void aRuntimeThatDiesEndsTheProcessWithExit70() throws Exception {
        CompletableFuture<Throwable> died = new CompletableFuture<>();
        List<Duration> shutdowns = new CopyOnWriteArrayList<>();
        CountDownLatch waitLetGo = new CountDownLatch(1);
        int status = cli()
                .runtimeFactory(context -> new BrokerRuntime() {
                    private final BrokerRuntime idle = new IdleRuntime(context);

                    @Override
                    public BooleanSupplier ready() {
                        return idle.ready();
                    }

                    @Override
                    public Supplier<BrokerStatus> status() {
                        return idle.status();
                    }

                    @Override
                    public void start() {
                        // the loop dies on its own thread, after start() returned
                        Thread.ofVirtual().start(() -> died.complete(new IllegalStateException("a bug in the loop")));
                    }

                    @Override
                    public void shutdown(Duration drainDeadline) {
                        shutdowns.add(drainDeadline);
                    }

                    @Override
                    public CompletionStage<Throwable> died() {
                        return died;
                    }
                })
                .shutdownWait(() -> {
                    try {
                        new CountDownLatch(1).await(); // no signal ever comes
                        throw new AssertionError("unreachable");
                    } finally {
                        waitLetGo.countDown();
                    }
                })
                .build()
                .run("--config", config.toString());
        assertEquals(Cli.EXIT_RUNTIME_DIED, status, err());
        assertEquals(70, status, "the documented code (docs/operations.md), neither 1 nor 2 (RestartPreventExitStatus)");
        Map<String, String> e = event("runtime_died");
        assertEquals("error", e.get("level"), err());
        assertEquals("70", e.get("exit_code"), err());
        assertEquals("java.lang.IllegalStateException", e.get("error_class"), err());
        assertEquals(List.of(Duration.ZERO), shutdowns);
        assertTrue(waitLetGo.await(10, TimeUnit.SECONDS), "the shutdown wait is interrupted");
        assertTrue(events().stream().noneMatch(x -> "stopped".equals(x.get("event"))), err());
    }

    @Test
    void aRuntimeThatCannotBeBuiltIsAStartUpFailureExit3() {
        int status = cli()
                .runtimeFactory(context -> {
                    throw new IllegalStateException("cannot configure the Kubernetes client: no kubeconfig");
                })
                .build()
                .run("--config", config.toString());
        assertEquals(3, status);
        assertEquals("cannot create the broker runtime", event("startup_failed").get("problem"), err());
        assertEquals("java.lang.IllegalStateException", event("startup_failed").get("error_class"), err());
        assertTrue(events().stream().noneMatch(e -> "runtime_started".equals(e.get("event"))), err());
    }

    @Test
    void anInvalidConfigurationFailsBeforeAnythingIsServed() throws Exception {
        Files.writeString(config, Files.readString(config) + "unknown_field: 1\n");
        int status = cli()
                .runtimeFactory(context -> {
                    throw new AssertionError("must not build the runtime");
                })
                .build()
                .run("--config", config.toString());
        assertEquals(1, status);
        assertTrue(events().stream().noneMatch(e -> "started".equals(e.get("event"))), err());
        assertTrue(event("config_invalid").get("problem").contains("unknown_field"), err());
        assertEquals("invalid configuration (1 problem)", event("startup_failed").get("problem"), err());
    }

    private void probe(StringBuilder seen, String... paths) {
        String port = event("started").get("metrics_port");
        HttpClient http = HttpClient.newHttpClient();
        for (String path : paths) {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + path)).build(), HttpResponse.BodyHandlers.ofString());
                seen.append(path).append(' ').append(r.statusCode());
                if (path.equals("/healthz")) {
                    seen.append(' ').append(r.body().strip());
                } else if (path.equals("/statusz")) {
                    Matcher state = Pattern.compile("\"state\":\"[a-z]+\"").matcher(r.body());
                    seen.append(' ').append(state.find() ? state.group() : r.body());
                }
                seen.append('\n');
            } catch (java.io.IOException | InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }
}
