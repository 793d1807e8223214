package io.continuum.broker.relay;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.SessionState;
import io.continuum.broker.testing.leaks.LeakCheck;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.continuum.broker.relay.BrokerHarness.CREDENTIAL;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * Issue 56 item 1: a session loop that dies says so, and only then. {@link EventBroker#died()} completes with the
 * error that ended the loop (the app exits on it, so Kubernetes or systemd restarts the broker); outages of the
 * router, of the credential and of the API server are retried for as long as the broker runs and never complete it.
 */
@ExtendWith({LeakCheck.class, BrokerHarness.CloseAfterEach.class})
class SessionLoopDeathTest {

    @Test
    void anErrorThatEndsTheLoopCompletesDied() throws Exception {
        // The harness reads the credential once to register it; the loop's first attempt then meets an Error
        // (what a broken class path or an exhausted JVM throws), which no attempt turns into an outcome.
        AtomicInteger reads = new AtomicInteger();
        LinkageError error = new LinkageError("simulated: a class the attempt needs cannot be loaded");
        BrokerHarness h = new BrokerHarness(c -> c.credential(() -> {
            if (reads.incrementAndGet() > 1) {
                throw error;
            }
            return Credential.of(CREDENTIAL);
        }), r -> r);
        h.start();
        Throwable cause = h.broker.died().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertSame(error, cause);
        assertEquals(SessionState.IDLE, h.broker.status().state(), "the loop's state says it no longer runs");
    }

    @Test
    void aRouterThatRefusesTheCredentialNeverCompletesDied() {
        BrokerHarness h = new BrokerHarness(
                c -> c.credential(() -> Credential.of("not-the-right-credential-0123456789abcdef")), r -> r);
        h.start();
        await(() -> h.metrics.get("session_attempts_total{result=refused}") >= 5, "five refused attempts");
        assertStillRunning(h);
    }

    @Test
    void aCredentialThatCannotBeReadNeverCompletesDied() {
        AtomicInteger reads = new AtomicInteger();
        BrokerHarness h = new BrokerHarness(c -> c.credential(() -> {
            if (reads.incrementAndGet() > 1) {
                throw new IOException("the mounted Secret is gone");
            }
            return Credential.of(CREDENTIAL);
        }), r -> r);
        h.start();
        await(() -> h.metrics.get("session_ends_total{reason=connect_failed}") >= 5, "five failed attempts");
        assertStillRunning(h);
    }

    @Test
    void aRouterThatIsDownNeverCompletesDied() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        BrokerHarness h = new BrokerHarness(c -> c.busUrl(URI.create("https://localhost:" + closedPort)), r -> r);
        h.start();
        await(() -> h.metrics.get("session_ends_total{reason=connect_failed}") >= 5, "five failed connects");
        assertStillRunning(h);
    }

    @Test
    void anApiServerThatNeverSyncsNeverCompletesDied() {
        BrokerHarness h = new BrokerHarness();
        h.view.synced(false);
        h.start();
        await(() -> h.broker.status().state() == SessionState.SYNCING, "waiting for the view");
        assertStillRunning(h);
    }

    private static void assertStillRunning(BrokerHarness h) {
        CompletableFuture<Throwable> died = h.broker.died().toCompletableFuture();
        assertFalse(died.isDone(), () -> "the loop died: " + died.join());
        assertFalse(h.broker.status().state() == SessionState.IDLE, "the loop still runs");
    }
}
