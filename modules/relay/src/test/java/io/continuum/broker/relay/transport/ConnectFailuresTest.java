package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.ServerIdentity;
import io.continuum.broker.testing.router.RawH2Peer;
import io.continuum.broker.testing.router.TestRouter;
import org.junit.jupiter.api.Test;

/** TLS verification, ALPN h2 only, and the connect timeout bounding TCP + TLS + SETTINGS together. */
class ConnectFailuresTest {

    private static BusEndpoint endpointWith(URI url, TlsTrust trust, String name, Duration timeout) {
        return new BusEndpoint(url, trust, name, timeout, "continuum-event-broker/test");
    }

    private static BusConnectException.Kind kindOf(BusEndpoint endpoint) {
        return assertThrows(BusConnectException.class, () -> TransportFixture.connector().connect(endpoint)).kind();
    }

    @Test
    void untrustedExpiredNotYetValidAndWrongNameAreTlsFailures() throws Exception {
        try (TestRouter router = TestRouter.builder(TransportFixture.SERVER).start()) {
            URI url = router.busUrl();
            assertEquals(BusConnectException.Kind.TLS, kindOf(endpointWith(url,
                    TlsTrust.certificates(List.of(EphemeralPki.create("other-ca").caCertificate())), null, WAIT)), "untrusted CA");
            assertEquals(BusConnectException.Kind.TLS, kindOf(endpointWith(url,
                    TlsTrust.certificates(List.of(TransportFixture.PKI.caCertificate())), "router.example", WAIT)), "name mismatch");
            assertEquals(BusConnectException.Kind.TLS, kindOf(endpointWith(url, TlsTrust.systemRoots(), null, WAIT)),
                    "test CA is not a system root");
            // tls_server_name overrides the URL host: connect by IP, verify the DNS name
            URI byIp = URI.create("https://127.0.0.1:" + url.getPort());
            try (BusConnection ok = TransportFixture.connector().connect(endpointWith(byIp,
                    TlsTrust.certificates(List.of(TransportFixture.PKI.caCertificate())), "localhost", WAIT))) {
                assertTrue(ok.isOpen());
            }
        }
        Instant now = Instant.now();
        ServerIdentity expired = TransportFixture.PKI.server(List.of("localhost"), now.minus(Duration.ofDays(3)),
                now.minus(Duration.ofDays(1)));
        ServerIdentity notYet = TransportFixture.PKI.server(List.of("localhost"), now.plus(Duration.ofDays(1)),
                now.plus(Duration.ofDays(3)));
        for (ServerIdentity identity : List.of(expired, notYet)) {
            try (RawH2Peer peer = RawH2Peer.start(identity, Map.of())) {
                assertEquals(BusConnectException.Kind.TLS, kindOf(endpoint(peer.busUrl())));
            }
        }
    }

    @Test
    void tls12PeerIsAccepted() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of(), "TLSv1.2");
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            String socket = TransportFixture.probe(connection).socketDescription();
            assertTrue(socket.startsWith("TLSv1.2 alpn=h2"), socket);
        }
    }

    @Test
    void serverWithoutAlpnH2IsRefused() throws Exception {
        try (SSLServerSocket listener = tlsListener("http/1.1")) {
            Thread server = handshakeThenReadToTheEnd(listener);
            BusConnectException e = assertThrows(BusConnectException.class, () -> TransportFixture.connector()
                    .connect(endpoint(URI.create("https://localhost:" + listener.getLocalPort()))));
            assertEquals(BusConnectException.Kind.TLS, e.kind());
            // the JDK server answers a ClientHello offering only h2 with no_application_protocol
            server.join(WAIT);
        }
    }

    @Test
    void refusedTcpIsATcpFailure() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        assertEquals(BusConnectException.Kind.TCP, kindOf(endpoint(URI.create("https://localhost:" + port))));
    }

    @Test
    void silentTlsPeerAndMissingSettingsEndAtTheConnectTimeout() throws Exception {
        Duration timeout = Duration.ofMillis(700);
        // accepts TCP, never answers the TLS ClientHello
        try (LoopbackListener silent = LoopbackListener.open("silent-tls-peer", 5)) {
            long start = System.nanoTime();
            assertEquals(BusConnectException.Kind.TIMEOUT, kindOf(endpointWith(
                    URI.create("https://localhost:" + silent.port()),
                    TlsTrust.certificates(List.of(TransportFixture.PKI.caCertificate())), null, timeout)));
            System.out.println("[transport] silent TLS peer: connect failed after "
                    + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms (timeout 700 ms)");
        }
        // completes TLS with h2 but never sends SETTINGS: the first SETTINGS is awaited within the connect timeout
        try (SSLServerSocket listener = tlsListener("h2")) {
            Thread accept = handshakeThenReadToTheEnd(listener);
            long start = System.nanoTime();
            assertEquals(BusConnectException.Kind.TIMEOUT, kindOf(endpointWith(
                    URI.create("https://localhost:" + listener.getLocalPort()),
                    TlsTrust.certificates(List.of(TransportFixture.PKI.caCertificate())), null, timeout)));
            long millis = Duration.ofNanos(System.nanoTime() - start).toMillis();
            System.out.println("[transport] no SETTINGS: connect failed after " + millis + " ms (timeout 700 ms)");
            assertFalse(millis > 15_000, "bounded by the connect timeout");
            accept.join(WAIT);
        }
    }

    @Test
    void plaintextUrlIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> endpoint(URI.create("http://localhost:1")));
    }

    /** A TLS listener on loopback with the test server's identity, offering only the ALPN protocol {@code alpn}. */
    private static SSLServerSocket tlsListener(String alpn) throws IOException {
        SSLServerSocket listener = (SSLServerSocket) TransportFixture.SERVER.serverContext()
                .getServerSocketFactory().createServerSocket(0, 5, InetAddress.getLoopbackAddress());
        var parameters = listener.getSSLParameters();
        parameters.setApplicationProtocols(new String[] {alpn});
        listener.setSSLParameters(parameters);
        return listener;
    }

    /** Accepts one connection on a virtual thread, handshakes, and reads until the client hangs up (or the handshake fails). */
    private static Thread handshakeThenReadToTheEnd(SSLServerSocket listener) {
        return Thread.ofVirtual().start(() -> {
            try (SSLSocket s = (SSLSocket) listener.accept()) {
                s.startHandshake();
                s.getInputStream().readAllBytes();
            } catch (IOException ignored) {
                // closed by the client
            }
        });
    }
}
