package io.continuum.broker.demo;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The real broker ({@code Main}) in a child JVM, as an operator runs it: the test's class path, the
 * configuration file {@code config.yaml} in the test's directory, client-java pointed at the fake API
 * server, none of the test environment's {@code CONTINUUM_EVENT_BROKER_*} variables, and stdout and stderr
 * together in {@code broker.log} beside the configuration.
 */
final class BrokerProcess {
    private BrokerProcess() {
    }

    static Process start(Path dir, Path kubeconfig) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"),
                "io.continuum.broker.app.Main",
                "--config", dir.resolve("config.yaml").toString()))
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("broker.log").toFile());
        pb.environment().put("KUBECONFIG", kubeconfig.toString());
        pb.environment().keySet().removeIf(k -> k.startsWith("CONTINUUM_EVENT_BROKER_"));
        return pb.start();
    }
}
