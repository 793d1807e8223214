package io.continuum.broker.demo;

import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.secrets.Secrets;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * R-BEH-8 and bus-protocol-v1.md section 4 item 6 on a real child JVM running the real
 * {@code Main}: SIGTERM sends {@code draining}, lets the open stream finish, exits 0; a second
 * SIGTERM exits at once with 128 + 15.
 */
class SignalDrainTest extends ChildBrokerTest {
    private static final String CREDENTIAL = "signal-test-credential-0123456789abcdef";

    @Override
    String credential() {
        return CREDENTIAL;
    }

    @BeforeEach
    void advertiseAndConfigure() throws IOException {
        peers.kube.put("ns", DemoMetadata.resource("ns", 0, "dynamo", peers.publisher.port()));
        BrokerProcess.writeConfig(dir, peers.router.url().toString(), "signal-test", "drain_deadline: 60s");
    }

    private RouterSession startBrokerWithOneOpenStream() throws IOException {
        child = BrokerProcess.start(dir, peers.kube.kubeconfig());
        RouterSession session = peers.router.awaitSession(WAIT);
        session.subscribe(1, "dynamo", "127.0.0.1", peers.publisher.port());
        assertInstanceOf(Frame.StreamOpened.class, session.awaitAnswer(1, WAIT));
        return session;
    }

    @Test
    @Timeout(120)
    void sigtermDrainsTheOpenStreamThenExitsZero() throws Exception {
        RouterSession session = startBrokerWithOneOpenStream();
        Socket upstream = peers.publisher.awaitConnection();
        credentialAppearsInNoObservabilityBody();
        child.destroy(); // SIGTERM
        Frame.Draining draining = session.await(Frame.Draining.class, f -> true, WAIT);
        assertEquals(60_000, draining.deadlineMs());
        session.subscribe(2, "dynamo", "127.0.0.1", peers.publisher.port());
        assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(2, WAIT));
        assertTrue(child.isAlive(), "the broker waits for the open stream");
        upstream.close(); // the stream finishes: the drain completes
        assertTrue(child.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS), log());
        assertEquals(0, child.exitValue(), log());
    }

    @Test
    @Timeout(120)
    void aSecondSigtermExitsAtOnceWith143() throws Exception {
        RouterSession session = startBrokerWithOneOpenStream();
        peers.publisher.awaitConnection();
        child.destroy();
        session.await(Frame.Draining.class, f -> true, WAIT);
        child.destroy();
        assertTrue(child.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS), log());
        assertEquals(128 + 15, child.exitValue(), log());
    }

    /** R-SEC-14 with a live session and an open stream: no endpoint body shows the credential. */
    private void credentialAppearsInNoObservabilityBody() throws Exception {
        String log = log();
        // Complete lines only: the broker is still running and may be writing one.
        String port = log.substring(0, log.lastIndexOf('\n') + 1).lines().map(io.continuum.broker.testing.logs.Logfmt::parse)
                .filter(e -> "started".equals(e.get("event"))).map(e -> e.get("metrics_port")).findFirst()
                .orElseThrow(() -> new AssertionError("no event=started in:\n" + log));
        HttpClient http = HttpClient.newHttpClient();
        for (String path : List.of("/metrics", "/readyz", "/statusz", "/healthz")) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + path)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), path + ": " + r.body());
            Secrets.assertAbsent("GET " + path, r.body());
        }
    }

    private String log() throws IOException {
        return BrokerProcess.log(dir);
    }
}
