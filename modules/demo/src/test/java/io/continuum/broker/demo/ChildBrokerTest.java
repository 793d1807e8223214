package io.continuum.broker.demo;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every test of a real broker in a child JVM against the in-process peers sets up and tears down: a
 * fresh directory, the router, Kubernetes API and publisher ({@link BrokerPeers}) with the test's credential,
 * and the child, which is stopped and whose log is scanned for the credential after the test.
 */
abstract class ChildBrokerTest {
    static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;
    BrokerPeers peers;
    /** Set by the test once it starts the broker ({@link BrokerProcess#start}). */
    Process child;

    /** The credential the router accepts; registered as a secret by the peers. */
    abstract String credential();

    @BeforeEach
    final void startPeers() throws IOException {
        peers = BrokerPeers.start(dir, credential());
    }

    @AfterEach
    final void stopChildAndPeers() throws IOException, InterruptedException {
        BrokerProcess.stopAndScan(child, dir, WAIT);
        peers.close();
    }
}
