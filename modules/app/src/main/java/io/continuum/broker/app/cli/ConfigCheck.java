package io.continuum.broker.app.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.continuum.broker.app.config.BrokerConfig;
import io.continuum.broker.app.config.ConfigException;
import io.continuum.broker.app.config.ConfigLoader;
import io.continuum.broker.app.config.ConfigProblem;
import io.continuum.broker.app.secrets.CaBundle;
import io.continuum.broker.app.secrets.CaBundleException;
import io.continuum.broker.app.secrets.CaBundleSource;
import io.continuum.broker.app.secrets.CredentialException;
import io.continuum.broker.app.secrets.CredentialSource;
import io.continuum.broker.relay.api.Credential;

/**
 * {@code --check-config}: loads the configuration, the credential and the CA bundle exactly as a start would,
 * and prints either the effective settings (stdout, exit 0) or every problem found (stderr, exit 1). Nothing
 * is started and nothing is logged.
 */
final class ConfigCheck {
    private final ConfigLoader loader;
    private final Map<String, String> environment;
    private final Clock clock;

    ConfigCheck(ConfigLoader loader, Map<String, String> environment, Clock clock) {
        this.loader = loader;
        this.environment = environment;
        this.clock = clock;
    }

    int run(Path configPath, PrintStream out, PrintStream err) {
        List<String> problems = new ArrayList<>();
        List<String> report = new ArrayList<>();
        BrokerConfig config = null;
        try {
            config = loader.load(configPath);
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
            return Cli.EXIT_OK;
        }
        err.println("continuum-event-broker: configuration check failed (" + problems.size()
                            + (problems.size() == 1 ? " problem):" : " problems):"));
        problems.forEach(p -> err.println("  " + p));
        return Cli.EXIT_INVALID;
    }
}
