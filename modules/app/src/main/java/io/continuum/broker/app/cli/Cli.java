package io.continuum.broker.app.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
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
import io.continuum.broker.app.secrets.CaBundle;
import io.continuum.broker.app.secrets.CaBundleException;
import io.continuum.broker.app.secrets.CaBundleSource;
import io.continuum.broker.app.secrets.Credential;
import io.continuum.broker.app.secrets.CredentialException;
import io.continuum.broker.app.secrets.CredentialSource;
import io.continuum.broker.event.Event;
import io.continuum.broker.event.EventLog;
import io.continuum.broker.event.Severity;

/**
 * The command line: {@code continuum-event-broker [--config PATH] [--check-config]}, plus
 * {@code --help} and {@code --version}. Every input (arguments, environment, streams, the
 * ServiceAccount namespace file, the runtime, the shutdown wait) is injected, so tests run it
 * in-process.
 *
 * <p>Exit codes: {@value #EXIT_OK} success or clean shutdown; {@value #EXIT_INVALID} invalid
 * configuration, credential or CA bundle; {@value #EXIT_USAGE} usage error; {@value #EXIT_STARTUP}
 * start-up failure (e.g. {@code metrics_listen} cannot be bound); 128 + n when a second signal n
 * forces an immediate exit.
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

    static final String USAGE = "usage: continuum-event-broker [--config PATH] [--check-config]";
    private static final EventLog LOG = EventLog.named("io.continuum.broker.app");

    private final Map<String, String> environment;
    private final Path serviceAccountNamespaceFile;
    private final Path defaultConfigPath;
    private final PrintStream out;
    private final PrintStream err;
    private final BrokerRuntimeFactory runtimeFactory;
    private final ShutdownWait shutdownWait;
    private final Clock clock;

    private Cli(Builder b) {
        this.environment = b.environment;
        this.serviceAccountNamespaceFile = b.serviceAccountNamespaceFile;
        this.defaultConfigPath = b.defaultConfigPath;
        this.out = b.out;
        this.err = b.err;
        this.runtimeFactory = b.runtimeFactory;
        this.shutdownWait = b.shutdownWait;
        this.clock = b.clock;
    }

    /**
     * A builder with production defaults: process environment, real streams, the idle runtime, and
     * SIGTERM/SIGINT handling.
     *
     * @return builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Blocks until the broker should shut down.
     */
    @FunctionalInterface
    public interface ShutdownWait {
        /**
         * Waits for the first shutdown request.
         *
         * @return a description such as the signal number, for the log
         * @throws InterruptedException if interrupted
         */
        int await() throws InterruptedException;
    }

    /**
     * The broker version from the build.
     *
     * @return version such as {@code 0.1.0}
     */
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

    /**
     * Runs the command line.
     *
     * @param args arguments
     * @return exit status
     */
    public int run(String... args) {
        Path configPath = defaultConfigPath;
        boolean configGiven = false;
        boolean check = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--help", "-h" -> {
                    out.println(help());
                    return EXIT_OK;
                }
                case "--version" -> {
                    out.println("continuum-event-broker " + version());
                    return EXIT_OK;
                }
                case "--check-config" -> {
                    if (check) {
                        return usage("--check-config given twice");
                    }
                    check = true;
                }
                default -> {
                    String value;
                    if (a.equals("--config")) {
                        if (i + 1 >= args.length) {
                            return usage("--config needs a PATH");
                        }
                        value = args[++i];
                    } else if (a.startsWith("--config=")) {
                        value = a.substring("--config=".length());
                    } else if (a.startsWith("-")) {
                        return usage("unknown option '" + a + "'");
                    } else {
                        return usage("unexpected argument '" + a + "'");
                    }
                    if (configGiven) {
                        return usage("--config given twice");
                    }
                    if (value.isEmpty()) {
                        return usage("--config needs a non-empty PATH");
                    }
                    configGiven = true;
                    configPath = Path.of(value);
                }
            }
        }
        return check ? checkConfig(configPath) : runBroker(configPath);
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

    private int checkConfig(Path configPath) {
        List<String> problems = new ArrayList<>();
        List<String> report = new ArrayList<>();
        BrokerConfig config = null;
        try {
            config = loader().load(configPath);
            report.add("configuration " + configPath + ": ok");
            // The effective value of every field (from the field table), and where each came from.
            for (BrokerConfig.Setting s : config.settings()) {
                report.add("  " + s.name() + " = " + s.value() + "  (" + s.origin() + ")");
            }
        } catch (ConfigException e) {
            e.problems().stream().map(ConfigProblem::toString).forEach(problems::add);
        }
        if (config != null) {
            try {
                Credential c = CredentialSource.create(config.credential(), environment).load();
                report.add("credential from " + config.credential() + ": ok (" + c.length() + " bytes)");
            } catch (CredentialException e) {
                problems.add(e.getMessage());
            }
            if (config.caFile().isPresent()) {
                try {
                    CaBundle bundle = CaBundleSource.create(config.caFile().get(), clock).load();
                    report.add("CA bundle " + bundle.path() + ": ok (" + bundle.certificates().size()
                                       + (bundle.certificates().size() == 1 ? " certificate)" : " certificates)"));
                    bundle.summaries(clock.instant()).forEach(s -> report.add("  " + s));
                } catch (CaBundleException e) {
                    problems.add(e.getMessage());
                }
            } else {
                report.add("CA bundle: system roots (ca_file not set)");
            }
        } else {
            problems.add("credential and CA bundle not checked: the configuration is invalid");
        }
        if (problems.isEmpty()) {
            report.forEach(out::println);
            return EXIT_OK;
        }
        err.println("continuum-event-broker: configuration check failed (" + problems.size()
                            + (problems.size() == 1 ? " problem):" : " problems):"));
        problems.forEach(p -> err.println("  " + p));
        return EXIT_INVALID;
    }

    private int runBroker(Path configPath) {
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
        // Handlers go in before anything starts, so an early SIGTERM still drains instead of killing.
        ShutdownWait wait = shutdownWait != null ? shutdownWait : ShutdownSignals.install()::awaitFirst;
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

        try (BrokerMetrics metrics = BrokerMetrics.create()) {
            // R-MET: the observability server is up from start-up, and /healthz never depends on the
            // router or the API server. So it starts before the runtime is built: building the
            // Kubernetes client (client-java, OkHttp, Gson's model adapters, Bouncy Castle) and the
            // relay (Helidon's HTTP/2 client, TLS) is most of the start-up work, and /healthz answers
            // meanwhile. Until the runtime exists, /readyz is 503 and /statusz shows "syncing".
            AtomicReference<BrokerRuntime> running = new AtomicReference<>();
            BrokerStatus starting = new BrokerStatus(BrokerStatus.SessionState.SYNCING, clock.instant(),
                    config.clientId(), config.busUrl().toString(), Optional.empty(), 0, false, 0, 0);
            ObservabilityServer server;
            try {
                server = ObservabilityServer.start(config.metricsListen(), metrics,
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
            try (server) {
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
                int signal = wait.await();
                LOG.info("shutdown_requested").field("signal", signal)
                        .field("drain_deadline", io.continuum.broker.app.config.Durations.format(config.drainDeadline())).log();
                runtime.shutdown(config.drainDeadline());
            }
            LOG.info("stopped").log();
            return EXIT_OK;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            LOG.warn("interrupted").log();
            return EXIT_OK;
        }
    }

    /**
     * Builder of {@link Cli}.
     */
    public static final class Builder {
        private Map<String, String> environment = System.getenv();
        private Path serviceAccountNamespaceFile = ConfigLoader.SERVICE_ACCOUNT_NAMESPACE_FILE;
        private Path defaultConfigPath = BrokerConfig.DEFAULT_PATH;
        private PrintStream out = System.out;
        private PrintStream err = System.err;
        private BrokerRuntimeFactory runtimeFactory = IdleRuntime::new;
        private ShutdownWait shutdownWait;
        private Clock clock = Clock.systemUTC();

        private Builder() {
        }

        /**
         * Environment variables.
         *
         * @param environment variables
         * @return this
         */
        public Builder environment(Map<String, String> environment) {
            this.environment = Map.copyOf(environment);
            return this;
        }

        /**
         * ServiceAccount namespace file.
         *
         * @param path file
         * @return this
         */
        public Builder serviceAccountNamespaceFile(Path path) {
            this.serviceAccountNamespaceFile = path;
            return this;
        }

        /**
         * Standard output.
         *
         * @param out stream
         * @return this
         */
        public Builder out(PrintStream out) {
            this.out = out;
            return this;
        }

        /**
         * Standard error (also where logs go).
         *
         * @param err stream
         * @return this
         */
        public Builder err(PrintStream err) {
            this.err = err;
            return this;
        }

        /**
         * The runtime to run (the relay once wired; {@link IdleRuntime} by default).
         *
         * @param factory factory
         * @return this
         */
        public Builder runtimeFactory(BrokerRuntimeFactory factory) {
            this.runtimeFactory = factory;
            return this;
        }

        /**
         * How to wait for shutdown (by default SIGTERM/SIGINT handlers, installed right after the
         * configuration loads).
         *
         * @param wait waiter
         * @return this
         */
        public Builder shutdownWait(ShutdownWait wait) {
            this.shutdownWait = wait;
            return this;
        }

        /**
         * The file read when no {@code --config} is given ({@link BrokerConfig#DEFAULT_PATH}); tests point
         * it into their own directory so that their result never depends on what the machine has in /etc.
         *
         * @param path configuration file
         * @return this
         */
        public Builder defaultConfigPath(Path path) {
            this.defaultConfigPath = path;
            return this;
        }

        /**
         * Clock for certificate expiry.
         *
         * @param clock clock
         * @return this
         */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * Builds.
         *
         * @return the CLI
         */
        public Cli build() {
            return new Cli(this);
        }
    }
}
