package io.continuum.broker.demo;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.kube.FakeKubeApi;
import io.continuum.broker.testing.pki.EphemeralPki;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * bus-protocol-v1.md section 4 item 6 on a real child JVM running the real {@code Main}: with no welcomed
 * session, SIGTERM exits 0 at once, also while the router leaves the TLS handshake unanswered (a listener
 * that accepts and never speaks), instead of holding the exit until {@code bus_connect_timeout}.
 */
class SignalWhileConnectingTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String CREDENTIAL = "signal-connect-credential-0123456789abcdef";

    @TempDir
    Path dir;
    private Process child;

    @AfterEach
    void tearDown() throws IOException, InterruptedException {
        BrokerProcess.stopAndScan(child, dir, WAIT);
    }

    @Test
    @Timeout(120)
    void sigtermDuringAnUnansweredTlsHandshakeExitsZeroAtOnce() throws Exception {
        EphemeralPki pki = EphemeralPki.create();
        FakeKubeApi kube = FakeKubeApi.builder().build();
        try (LoopbackListener silent = LoopbackListener.open("silent-router", 10)) {
            kube.put("ns", DemoMetadata.resource("ns", 0, "dynamo", 5557));
            BrokerProcess.writeSecrets(dir, pki, CREDENTIAL);
            // bus_connect_timeout far beyond the test's wait: only abandoning the attempt exits in time
            BrokerProcess.writeConfig(dir, "https://localhost:" + silent.port(), "signal-connect-test",
                    "bus_connect_timeout: 5m");
            child = BrokerProcess.start(dir, kube.kubeconfig());
            try (Socket attempt = silent.awaitConnection()) {
                attempt.setSoTimeout((int) WAIT.toMillis());
                InputStream in = attempt.getInputStream();
                assertTrue(in.read() >= 0, "the ClientHello arrives; the router never answers it");
                child.destroy(); // SIGTERM
                assertTrue(child.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS),
                        "the broker must exit at once, not after bus_connect_timeout: " + log());
                assertEquals(0, child.exitValue(), log());
                try {
                    while (in.read() >= 0) {
                        // the rest of the ClientHello, then EOF: the attempt was abandoned
                    }
                } catch (SocketException reset) {
                    // also an end
                }
            }
        } finally {
            kube.close();
        }
    }

    private String log() throws IOException {
        return BrokerProcess.log(dir);
    }
}
