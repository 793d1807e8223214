package io.continuum.broker.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.secrets.Secrets;

/**
 * The real broker ({@code Main}) in a child JVM, as an operator runs it: the test's class path, the
 * configuration file {@code config.yaml} in the test's directory, client-java pointed at the fake API
 * server, none of the test environment's {@code CONTINUUM_EVENT_BROKER_*} variables, and stdout and stderr
 * together in {@code broker.log} beside the configuration.
 */
final class BrokerProcess {
    private BrokerProcess() {
    }

    /** Writes {@code ca.pem} (the test CA) and {@code credential} into {@code dir}. */
    static void writeSecrets(Path dir, EphemeralPki pki, String credential) throws IOException {
        Files.write(dir.resolve("ca.pem"), pki.caPem());
        Files.writeString(dir.resolve("credential"), credential + "\n");
    }

    /**
     * Writes {@code config.yaml}: the bus URL, the CA and credential files {@link #writeSecrets} wrote, Kubernetes
     * namespace {@code ns}, Dynamo namespace {@code dynamo}, loopback publishers allowed, an ephemeral metrics port,
     * then {@code more} lines as they are.
     */
    static void writeConfig(Path dir, String busUrl, String clientId, String... more) throws IOException {
        List<String> lines = new ArrayList<>(List.of(
                "bus_url: " + busUrl,
                "ca_file: " + dir.resolve("ca.pem"),
                "client_id: " + clientId,
                "credential_file: " + dir.resolve("credential"),
                "kubernetes_namespace: ns",
                "dynamo_namespaces: [dynamo]",
                "allowed_cidrs: [127.0.0.0/8]",
                "metrics_listen: 127.0.0.1:0"));
        lines.addAll(List.of(more));
        lines.add("");
        Files.writeString(dir.resolve("config.yaml"), String.join("\n", lines));
    }

    /** Everything the child wrote so far (stdout and stderr). */
    static String log(Path dir) throws IOException {
        return Files.readString(dir.resolve("broker.log"));
    }

    /**
     * Kills a child that is still running and checks its log for credentials: the child's output is its own
     * process's, so the test-wide scan cannot see it. Nothing happens when no child was started.
     */
    static void stopAndScan(Process child, Path dir, Duration wait) throws IOException, InterruptedException {
        if (child == null) {
            return;
        }
        if (child.isAlive()) {
            child.destroyForcibly().waitFor(wait.toSeconds(), TimeUnit.SECONDS);
        }
        Secrets.assertAbsent("the broker's log", log(dir));
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
