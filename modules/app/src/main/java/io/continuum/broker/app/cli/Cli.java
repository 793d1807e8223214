package io.continuum.broker.app.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;

import io.continuum.broker.app.config.BrokerConfig;
import io.continuum.broker.app.config.ConfigException;
import io.continuum.broker.app.config.ConfigLoader;
import io.continuum.broker.app.config.ConfigProblem;
import io.continuum.broker.app.config.LogFormat;
import io.continuum.broker.app.logging.LoggingSetup;
import io.continuum.broker.app.observe.BrokerMetrics;
import io.continuum.broker.app.observe.BrokerStatus;
import io.continuum.broker.app.observe.ObservabilityServer;
import io.continuum.broker.app.runtime.BrokerContext;
import io.continuum.broker.app.runtime.BrokerRuntime;
import io.continuum.broker.app.runtime.BrokerRuntimeFactory;
import io.continuum.broker.app.runtime.IdleRuntime;
import io.continuum.broker.app.runtime.ShutdownSignals;
import io.continuum.broker.app.runtime.SystemdNotify;
import io.continuum.broker.app.secrets.CaBundle;
import io.continuum.broker.app.secrets.CaBundleException;
import io.continuum.broker.app.secrets.CaBundleSource;
import io.continuum.broker.app.secrets.CredentialException;
import io.continuum.broker.app.secrets.CredentialSource;
import io.continuum.broker.event.Event;
import io.continuum.broker.event.EventLog;
import io.continuum.broker.event.Severity;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.SessionState;

/**
 * The command line: {@code continuum-event-broker [--config PATH] [--check-config]}, plus
 * {@code --help} and {@code --version}. Every input (arguments, environment, streams, the
 * ServiceAccount namespace file, the runtime, the shutdown wait) is injected, so tests run it
 * in-process.
 *
 * <p>Exit codes: {@value #EXIT_OK} success or clean shutdown; {@value #EXIT_INVALID} invalid
 * configuration, credential or CA bundle; {@value #EXIT_USAGE} usage error; {@value #EXIT_STARTUP}
 * start-up failure (e.g. {@code metrics_listen} cannot be bound); {@value #EXIT_RUNTIME_DIED} the running broker
 * cannot work any more (its session loop ended by an unexpected error: restart it); 128 + n when a second signal n
 * forces an immediate exit. Outages (the router, the credential, the API server) never end the process: they are
 * retried for as long as it runs.
 */
public final class Cli {
    /** Success, or a clean shutdown. */
    public static final int EXIT_OK = 0;
    /** Invalid configuration, credential or CA bundle. */
    public static final int EXIT_INVALID = 1;
    /** Usage error. */
    public static final int EXIT_USAGE = 2;
    /** Start-up failure other than configuration (e.g. the metrics port cannot be bound). */
    public static final int EXIT_STARTUP = 3;
    /**
     * The running broker cannot work any more: its session loop ended by an unexpected error (a bug, an
     * {@link Error}). The process exits so that Kubernetes or systemd restarts it (a Pod that stayed up would look
     * Live and Ready and relay nothing). 70 is {@code EX_SOFTWARE} of sysexits(3), "an internal software error";
     * it is neither 1 nor 2, the codes the systemd unit's {@code RestartPreventExitStatus} keeps from restarting.
     */
    public static final int EXIT_RUNTIME_DIED = 70;

    static final String USAGE = "usage: continuum-event-broker [--config PATH] [--check-config]";
    private static final EventLog LOG = EventLog.named("io.continuum.broker.app");

    private final Map<String, String> environment;
    private final Path serviceAccountNamespaceFile;
    private final Path defaultConfigPath;
    private final PrintStream out;
    private final PrintStream err;
    private final BrokerRuntimeFactory runtimeFactory;
    private final ShutdownWait shutdownWait;
    private final ShutdownSignals signals;
    private final Clock clock;

    private Cli(Builder b) {
        this.environment = b.environment;
        this.serviceAccountNamespaceFile = b.serviceAccountNamespaceFile;
        this.defaultConfigPath = b.defaultConfigPath;
        this.out = b.out;
        this.err = b.err;
        this.runtimeFactory = b.runtimeFactory;
        this.shutdownWait = b.shutdownWait;
        this.signals = b.signals;
        this.clock = b.clock;
    }

    /**
     * A builder with production defaults: process environment, real streams, the idle runtime, and
     * SIGTERM/SIGINT handling.
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Blocks until the broker should shut down. */
    @FunctionalInterface
    public interface ShutdownWait {
        /** Waits for the first shutdown request and returns what asked for it (the signal number), for the log. */
        int await() throws InterruptedException;
    }

    /** The broker version from the build ({@code version.properties}), or {@code unknown}. */
    public static String version() {
        try (InputStream in = Cli.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs the command line and returns its exit status; only a broker run blocks (until shutdown). */
    public int run(String... args) {
        return switch (Command.parse(args, defaultConfigPath)) {
            case Command.Help h -> {
                out.println(help());
                yield EXIT_OK;
            }
            case Command.Version v -> {
                out.println("continuum-event-broker " + version());
                yield EXIT_OK;
            }
            case Command.UsageError u -> usage(u.problem());
            case Command.CheckConfig c -> new ConfigCheck(loader(), environment, clock).run(c.configPath(), out, err);
            case Command.RunBroker r -> runBroker(r.configPath());
        };
    }

    private int usage(String problem) {
        err.println("continuum-event-broker: " + problem);
        err.println(USAGE);
        err.println("Try 'continuum-event-broker --help' for more information.");
        return EXIT_USAGE;
    }

    static String help() {
        return USAGE + """


                Relays Dynamo ZMQ publisher bytes to a Continuum router over an outbound HTTP/2+TLS event bus.

                Options:
                  --config PATH    configuration file (default /etc/continuum-event-broker/config.yaml)
                  --check-config   validate the configuration file, the credential and the CA bundle, then exit
                  --help, -h       show this help and exit
                  --version        show the version and exit

                Environment:
                  CONTINUUM_EVENT_BROKER_<FIELD>   overrides a configuration field ('.' written as '_',
                                                   lists comma-separated, [] for an empty list),
                                                   e.g. CONTINUUM_EVENT_BROKER_BUS_URL
                  CONTINUUM_EVENT_BROKER_CREDENTIAL  default bearer credential variable

                Exit status:
                  0  success, or clean shutdown after SIGTERM/SIGINT
                  1  invalid configuration, credential or CA bundle
                  2  usage error
                  3  start-up failure (e.g. metrics_listen cannot be bound)
                  128+n  a second signal n forced an immediate exit""";
    }

    private ConfigLoader loader() {
        return ConfigLoader.create(environment, serviceAccountNamespaceFile);
    }

    private int runBroker(Path configPath) {
        // Handlers go in before anything else: a signal during start-up (a configuration, credential or CA file
        // being read, the runtime being built) exits 0 at once instead of killing the JVM with 143 or waiting for
        // a step that may never end; once the runtime runs, the first signal drains.
        ShutdownSignals signals = this.signals != null ? this.signals
                : shutdownWait == null ? ShutdownSignals.install() : null;
        ShutdownWait wait = shutdownWait != null ? shutdownWait : signals::awaitFirst;
        BrokerConfig config;
        try {
            config = loader().load(configPath);
        } catch (ConfigException e) {
            // The broker's stderr is its log: even an invalid configuration is reported as events (in the
            // default format, since the configured one is not known), one line per problem.
            LoggingSetup.configure(LogFormat.KEY_VALUE, err);
            for (ConfigProblem p : e.problems()) {
                LOG.error("config_invalid").field("config", configPath.toString()).field("problem", p.toString()).log();
            }
            LOG.error("startup_failed").field("problem", "invalid configuration (" + e.problems().size()
                    + (e.problems().size() == 1 ? " problem)" : " problems)")).log();
            return EXIT_INVALID;
        }
        LoggingSetup.configure(config.logFormat(), config.logLevel(), err);
        String version = version();
        Event loaded = LOG.info("config_loaded").field("version", version).field("config", configPath.toString());
        config.describe().forEach(kv -> loaded.field(kv[0], kv[1]));
        loaded.log();

        CredentialSource credential = CredentialSource.create(config.credential(), environment);
        Optional<CaBundleSource> caBundle = config.caFile().map(p -> CaBundleSource.create(p, clock));
        try {
            credential.load();
        } catch (CredentialException e) {
            LOG.error("startup_failed").field("problem", e.getMessage()).log();
            return EXIT_INVALID;
        }
        if (caBundle.isPresent()) {
            try {
                CaBundle bundle = caBundle.get().load();
                for (CaBundle.Summary s : bundle.summaries(clock.instant())) {
                    LOG.at(s.expired() ? Severity.WARN : Severity.INFO, "ca_certificate")
                            .field("ca_file", bundle.path().toString()).field("subject", s.subject())
                            .field("not_after", s.notAfter().toString()).field("expired", s.expired()).log();
                }
            } catch (CaBundleException e) {
                LOG.error("startup_failed").field("problem", e.getMessage()).log();
                return EXIT_INVALID;
            }
        }

        // R-MET: the observability server is up from start-up, and /healthz never depends on the router or
        // the API server. So it starts first: before the metrics exist (about 100 meters and the JVM binders;
        // a scrape that comes earlier waits the few milliseconds for them) and before the runtime is built
        // (the Kubernetes client: client-java, OkHttp, Gson's model adapters, Bouncy Castle; the relay:
        // its HTTP/2 connection and TLS), which is most of the start-up work. Until the runtime exists,
        // /readyz is 503 and /statusz shows "syncing".
        AtomicReference<BrokerRuntime> running = new AtomicReference<>();
        BrokerStatus starting = BrokerStatus.withoutRelay(SessionState.SYNCING, clock.instant(),
                config.clientId(), config.busUrl().toString());
        ObservabilityServer server;
        try {
            server = ObservabilityServer.start(config.metricsListen(),
                    () -> {
                        BrokerRuntime r = running.get();
                        return r != null && r.ready().getAsBoolean();
                    },
                    () -> {
                        BrokerRuntime r = running.get();
                        return r == null ? starting : r.status().get();
                    },
                    version);
        } catch (RuntimeException e) {
            LOG.error("startup_failed").field("problem", "cannot serve metrics_listen " + config.metricsListen())
                    .cause(e).log();
            return EXIT_STARTUP;
        }
        BrokerMetrics metrics;
        try {
            metrics = BrokerMetrics.create();
        } catch (RuntimeException e) {
            server.close();
            LOG.error("startup_failed").field("problem", "cannot create the metrics").cause(e).log();
            return EXIT_STARTUP;
        }
        // Closed in reverse order: the server first, so that no scrape reads metrics being closed.
        try (metrics; server) {
            try {
                server.serveMetrics(metrics);
            } catch (RuntimeException e) {
                LOG.error("startup_failed").field("problem", "cannot serve the metrics").cause(e).log();
                return EXIT_STARTUP;
            }
            LOG.info("started").field("metrics_port", server.port()).log();
            BrokerRuntime runtime;
            try {
                runtime = runtimeFactory.create(new BrokerContext(config, credential, caBundle, metrics, version));
            } catch (RuntimeException e) {
                LOG.error("startup_failed").field("problem", "cannot create the broker runtime").cause(e).log();
                return EXIT_STARTUP;
            }
            running.set(runtime);
            try {
                runtime.start();
            } catch (RuntimeException e) {
                LOG.error("startup_failed").field("problem", "cannot start the broker runtime").cause(e).log();
                return EXIT_STARTUP;
            }
            LOG.info("runtime_started").log();
            if (signals != null) {
                signals.started();
            }
            Optional<SystemdNotify> notify = systemdNotify();
            Thread readiness = notify.map(n -> Thread.ofVirtual().name("systemd-ready")
                    .start(() -> notifyWhenReady(runtime, n))).orElse(null);
            Stop stop;
            try {
                stop = awaitStop(wait, runtime.died());
            } finally {
                if (readiness != null) {
                    readiness.interrupt();
                    readiness.join(); // a READY=1 under way goes before STOPPING=1, never after it
                }
            }
            notify.ifPresent(n -> notify(n, "STOPPING=1\nSTATUS=" + (stop instanceof Stop.Died
                    ? "the session loop died; exiting " + EXIT_RUNTIME_DIED : "draining")));
            if (stop instanceof Stop.Died died) {
                LOG.error("runtime_died").field("exit_code", EXIT_RUNTIME_DIED)
                        .field("problem", "the session loop ended by an unexpected error; exiting to be restarted")
                        .cause(died.cause()).log();
                runtime.shutdown(Duration.ZERO); // no session to drain: this stops the metadata watch
                return EXIT_RUNTIME_DIED;
            }
            int signal = ((Stop.Signal) stop).number();
            LOG.info("shutdown_requested").field("signal", signal)
                    .field("drain_deadline", io.continuum.broker.app.config.Durations.format(config.drainDeadline())).log();
            runtime.shutdown(config.drainDeadline());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            LOG.warn("interrupted").log();
            return EXIT_OK;
        }
        LOG.info("stopped").log();
        return EXIT_OK;
    }

    /** The service manager's notifier when it asked for one ({@code Type=notify}); a bad address is logged. */
    private Optional<SystemdNotify> systemdNotify() {
        try {
            return SystemdNotify.fromEnvironment(environment);
        } catch (IllegalArgumentException e) {
            LOG.warn("systemd_notify_failed").field("problem", e.getMessage()).log();
            return Optional.empty();
        }
    }

    /**
     * Type=notify: READY=1 when {@code /readyz} would answer 200 (the first metadata sync), so that
     * {@code systemctl start} returns when the broker can serve; until then a status line says what it waits for.
     */
    private static void notifyWhenReady(BrokerRuntime runtime, SystemdNotify n) {
        notify(n, "STATUS=waiting for the first DynamoWorkerMetadata sync");
        try {
            while (!runtime.awaitReady(Duration.ofSeconds(1))) {
                // an API server outage: keep waiting (never an exit), systemd shows the status above
            }
        } catch (InterruptedException e) {
            return; // stopping before the first sync: STOPPING=1 follows
        }
        notify(n, "READY=1\nSTATUS=ready: the first DynamoWorkerMetadata sync is done");
    }

    private static void notify(SystemdNotify n, String state) {
        try {
            n.send(state);
            LOG.info("systemd_notified").field("state", state.lines().findFirst().orElse(state)).log();
        } catch (SystemdNotify.NotifyException e) {
            LOG.warn("systemd_notify_failed").field("socket", n.socket()).field("problem", e.getMessage()).log();
        }
    }

    /** Why the running broker stops: a shutdown request, or the runtime's death. */
    private sealed interface Stop {
        record Signal(int number) implements Stop {
        }

        record Died(Throwable cause) implements Stop {
        }
    }

    /**
     * Waits for whichever comes first: the shutdown request (on a virtual thread of its own, since a
     * {@link ShutdownWait} only blocks) or the runtime's death. What the wait throws is thrown here.
     */
    private static Stop awaitStop(ShutdownWait wait, CompletionStage<Throwable> died) throws InterruptedException {
        CompletableFuture<Stop> stop = new CompletableFuture<>();
        died.thenAccept(cause -> stop.complete(new Stop.Died(cause)));
        Thread waiter = Thread.ofVirtual().name("shutdown-wait").start(() -> {
            try {
                stop.complete(new Stop.Signal(wait.await()));
            } catch (InterruptedException e) {
                // the runtime died first
            } catch (Throwable t) {
                stop.completeExceptionally(t);
            }
        });
        try {
            return stop.get();
        } catch (ExecutionException e) {
            switch (e.getCause()) {
                case RuntimeException r -> throw r;
                case Error err -> throw err;
                default -> throw new IllegalStateException("the shutdown wait failed", e.getCause());
            }
        } finally {
            waiter.interrupt();
        }
    }

    /** Builder of {@link Cli}; every input has a production default. */
    public static final class Builder {
        private Map<String, String> environment = System.getenv();
        private Path serviceAccountNamespaceFile = ConfigLoader.SERVICE_ACCOUNT_NAMESPACE_FILE;
        private Path defaultConfigPath = BrokerConfig.DEFAULT_PATH;
        private PrintStream out = System.out;
        private PrintStream err = System.err;
        private BrokerRuntimeFactory runtimeFactory = IdleRuntime::new;
        private ShutdownWait shutdownWait;
        private ShutdownSignals signals;
        private Clock clock = Clock.systemUTC();

        private Builder() {
        }

        public Builder environment(Map<String, String> environment) {
            this.environment = Map.copyOf(environment);
            return this;
        }

        /** The file the namespace is read from when the configuration leaves it to the ServiceAccount. */
        public Builder serviceAccountNamespaceFile(Path path) {
            this.serviceAccountNamespaceFile = path;
            return this;
        }

        public Builder out(PrintStream out) {
            this.out = out;
            return this;
        }

        /** Standard error, which is also where the log goes. */
        public Builder err(PrintStream err) {
            this.err = err;
            return this;
        }

        /** The runtime to run ({@link IdleRuntime} unless one is given: the launcher gives the relay's). */
        public Builder runtimeFactory(BrokerRuntimeFactory factory) {
            this.runtimeFactory = factory;
            return this;
        }

        /**
         * How to wait for shutdown (by default SIGTERM/SIGINT handlers, installed before the
         * configuration loads).
         */
        public Builder shutdownWait(ShutdownWait wait) {
            this.shutdownWait = wait;
            return this;
        }

        /**
         * Signal handlers installed by the caller (the demo, which runs the broker beside its own peers), told when
         * the runtime has started, as the broker's own are: from then on the first signal drains instead of exiting
         * at once. Without {@link #shutdownWait} the broker waits for their first signal.
         */
        public Builder signals(ShutdownSignals signals) {
            this.signals = signals;
            return this;
        }

        /**
         * The file read when no {@code --config} is given ({@link BrokerConfig#DEFAULT_PATH}); tests point
         * it into their own directory so that their result never depends on what the machine has in /etc.
         */
        public Builder defaultConfigPath(Path path) {
            this.defaultConfigPath = path;
            return this;
        }

        /** The clock certificate expiry is judged by. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        public Cli build() {
            return new Cli(this);
        }
    }
}
