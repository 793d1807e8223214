package io.continuum.broker.testing.kube;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A kubeconfig file for client-java: one cluster at a URL, bearer token {@code fake-token}. */
final class Kubeconfig {
    private Kubeconfig() {
    }

    /** Writes the file into a new temporary directory; {@link #delete} removes both. */
    static Path write(String serverUrl) throws IOException {
        Path dir = Files.createTempDirectory("fake-kube");
        Path file = dir.resolve("kubeconfig");
        Files.writeString(file, """
                apiVersion: v1
                kind: Config
                clusters:
                - name: fake
                  cluster:
                    server: %s
                contexts:
                - name: fake
                  context:
                    cluster: fake
                    user: fake
                    namespace: default
                current-context: fake
                users:
                - name: fake
                  user:
                    token: fake-token
                """.formatted(serverUrl));
        return file;
    }

    static void delete(Path file) throws IOException {
        Files.deleteIfExists(file);
        Files.deleteIfExists(file.getParent());
    }
}
