package io.continuum.broker.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.kube.Fault;
import io.continuum.broker.testing.kube.FakeKubeApi;
import io.continuum.broker.testing.kube.RequestKind;
import io.continuum.broker.testing.pki.EphemeralPki;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 44 item 4 on a real child JVM running the real {@code Main}: the signal handlers are in before the
 * configuration is read, so a SIGTERM during start-up exits 0 at once, wherever start-up is. Each case holds the
 * broker in one start-up step with a named pipe that never delivers: the test opens the pipe for writing, which
 * returns exactly when the broker has opened it for reading, so the signal lands while the broker is blocked in
 * that step. Before, a SIGTERM while the configuration was read killed the JVM (143), and one while the credential
 * was read was held until the read ended (never).
 */
class SignalDuringStartUpTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String CREDENTIAL = "signal-startup-credential-0123456789abcdef";

    @TempDir
    Path dir;
    private Process child;
    private OutputStream pipeWriter;

    @AfterEach
    void tearDown() throws IOException, InterruptedException {
        if (pipeWriter != null) {
            pipeWriter.close();
        }
        BrokerProcess.stopAndScan(child, dir, WAIT);
    }

    @Test
    @Timeout(120)
    void aSigtermWhileTheConfigurationIsReadExitsZeroAtOnce() throws Exception {
        EphemeralPki pki = EphemeralPki.create();
        BrokerProcess.writeSecrets(dir, pki, CREDENTIAL);
        Path config = dir.resolve("config.yaml");
        mkfifo(config);
        try (FakeKubeApi kube = FakeKubeApi.builder().build()) {
            child = BrokerProcess.start(dir, kube.kubeconfig());
            sigtermOnceReadingAndExpectZero(config);
        }
    }

    @Test
    @Timeout(120)
    void aSigtermWhileTheCredentialIsReadExitsZeroAtOnce() throws Exception {
        EphemeralPki pki = EphemeralPki.create();
        BrokerProcess.writeSecrets(dir, pki, CREDENTIAL);
        Path credential = dir.resolve("credential");
        Files.delete(credential);
        mkfifo(credential);
        try (FakeKubeApi kube = FakeKubeApi.builder().build();
             LoopbackListener router = LoopbackListener.open("router", 10)) {
            BrokerProcess.writeConfig(dir, "https://localhost:" + router.port(), "signal-startup-test");
            child = BrokerProcess.start(dir, kube.kubeconfig());
            sigtermOnceReadingAndExpectZero(credential);
        }
    }

    @Test
    @Timeout(120)
    void aSigtermWhileTheFirstListHangsExitsZeroAtOnce() throws Exception {
        EphemeralPki pki = EphemeralPki.create();
        BrokerProcess.writeSecrets(dir, pki, CREDENTIAL);
        try (FakeKubeApi kube = FakeKubeApi.builder().build();
             LoopbackListener router = LoopbackListener.open("router", 10)) {
            kube.inject(RequestKind.LIST, Fault.hang());
            BrokerProcess.writeConfig(dir, "https://localhost:" + router.port(), "signal-startup-test");
            child = BrokerProcess.start(dir, kube.kubeconfig());
            kube.awaitRequest(r -> r.kind() == RequestKind.LIST, WAIT); // the first list, held unanswered
            sigtermAndExpectZeroAtOnce();
            kube.releaseHangs();
        }
    }

    /** Opens {@code pipe} for writing (returns once the broker opened it to read), then sends SIGTERM. */
    private void sigtermOnceReadingAndExpectZero(Path pipe) throws Exception {
        pipeWriter = new FileOutputStream(pipe.toFile()); // blocks until the broker opens the pipe: it is reading
        sigtermAndExpectZeroAtOnce();
        assertTrue(log().contains("shutdown_requested"), log());
    }

    private void sigtermAndExpectZeroAtOnce() throws InterruptedException, IOException {
        child.destroy(); // SIGTERM
        assertTrue(child.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS), "the broker must exit at once: " + log());
        assertEquals(0, child.exitValue(), log());
    }

    private static void mkfifo(Path path) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("mkfifo", path.toString()).inheritIO().start();
        assertEquals(0, p.waitFor(), "mkfifo " + path);
    }

    private String log() throws IOException {
        return BrokerProcess.log(dir);
    }
}
