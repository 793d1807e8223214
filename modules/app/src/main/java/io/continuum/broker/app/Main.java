package io.continuum.broker.app;

import io.continuum.broker.app.cli.Cli;
import io.continuum.broker.app.logging.LoggingSetup;
import io.continuum.broker.app.runtime.RelayRuntime;

/**
 * Entry point of {@code continuum-event-broker}:
 * {@code continuum-event-broker [--config PATH] [--check-config]}, {@code --help}, {@code --version}.
 * Exit status: 0 success or clean shutdown, 1 invalid configuration/credential/CA bundle, 2 usage
 * error, 3 start-up failure, 128 + n after a second signal n.
 */
public final class Main {
    private Main() {
    }

    /**
     * Runs the broker.
     *
     * @param args command line
     */
    public static void main(String[] args) {
        LoggingSetup.logUncaughtExceptions();
        System.exit(Cli.builder().runtimeFactory(RelayRuntime::new).build().run(args));
    }
}
