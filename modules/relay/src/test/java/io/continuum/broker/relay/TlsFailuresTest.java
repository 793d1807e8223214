package io.continuum.broker.relay;

import io.continuum.broker.testing.await.Poll;
import io.continuum.broker.testing.net.AcceptLoop;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;

import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

import io.continuum.broker.event.EventFormatter;
import io.continuum.broker.relay.transport.TransportSettings;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.logs.LogLines;
import io.continuum.broker.testing.logs.Logfmt;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.LegacyTlsServer;
import io.continuum.broker.testing.pki.ServerIdentity;
import io.continuum.broker.testing.secrets.Secrets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.transport.BusConnector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TLS failures at the broker level (R-BEH 6, R-SEC 13, bus-protocol-v1.md sections 1 and 4 item 4):
 * a router the broker must not trust, or cannot speak HTTP/2 over TLS 1.2+ with, fails the attempt with a log
 * line that says what failed, counts {@code session_attempts_total{result="failed"}} and
 * {@code session_ends_total{reason="connect_failed"}}, and the next attempt waits for the backoff. Every bad router
 * is a real JDK server socket on loopback (the TLS 1.1 one in a child JVM, see {@link LegacyTlsServer}).
 */
@ExtendWith(LeakCheck.class)
class TlsFailuresTest {
    private static final EphemeralPki PKI = BrokerHarness.PKI;
    /** initial == max: every delay is exactly this long, so each gap between attempts must be at least this. */
    private static final Duration BACKOFF = Duration.ofMillis(300);
    private static final int ATTEMPTS = 3;

    @Test
    void aRouterCertificateFromAnotherCaIsNotTrusted() throws Exception {
        ServerIdentity stranger = EphemeralPki.create("some-other-ca").localhostServer();
        try (BusPortServer router = BusPortServer.tls(stranger, "h2")) {
            failsAndBacksOff(router, c -> c, "server certificate not trusted");
        }
    }

    @Test
    void anExpiredRouterCertificateFails() throws Exception {
        Instant now = Instant.now();
        ServerIdentity expired = PKI.server(List.of("localhost"), now.minus(Duration.ofDays(3)),
                now.minus(Duration.ofDays(1)));
        try (BusPortServer router = BusPortServer.tls(expired, "h2")) {
            failsAndBacksOff(router, c -> c, "server certificate expired");
        }
    }

    @Test
    void aNotYetValidRouterCertificateFails() throws Exception {
        Instant now = Instant.now();
        ServerIdentity notYet = PKI.server(List.of("localhost"), now.plus(Duration.ofDays(1)),
                now.plus(Duration.ofDays(3)));
        try (BusPortServer router = BusPortServer.tls(notYet, "h2")) {
            failsAndBacksOff(router, c -> c, "server certificate not yet valid");
        }
    }

    @Test
    void aCertificateForAnotherNameThanTlsServerNameFails() throws Exception {
        try (BusPortServer router = BusPortServer.tls(PKI.localhostServer(), "h2")) {
            failsAndBacksOff(router, c -> c.tlsServerName("router.example"),
                    "name mismatch: the server certificate is not valid for router.example");
        }
    }

    @Test
    void aRouterOfferingOnlyHttp11OverAlpnFails() throws Exception {
        try (BusPortServer router = BusPortServer.tls(PKI.localhostServer(), "http/1.1")) {
            failsAndBacksOff(router, c -> c, "no ALPN h2");
        }
    }

    @Test
    void aRouterWithoutAlpnFails() throws Exception {
        try (BusPortServer router = BusPortServer.tls(PKI.localhostServer())) {
            failsAndBacksOff(router, c -> c, "no ALPN h2: the server selected no protocol");
        }
    }

    @Test
    void aPlaintextHttp11ServerOnTheBusPortFails() throws Exception {
        try (BusPortServer router = BusPortServer.plaintextHttp11()) {
            failsAndBacksOff(router, c -> c, "not a TLS server");
        }
    }

    @Test
    void aRouterSpeakingOnlyTls11Fails() throws Exception {
        try (LegacyTlsServer legacy = LegacyTlsServer.start(PKI.localhostServer(), "TLSv1.1")) {
            failsAndBacksOff(new Accepts() {
                @Override
                public URI url() {
                    return legacy.busUrl();
                }

                @Override
                public long awaitAccept() {
                    return legacy.awaitAccept(BrokerHarness.WAIT);
                }
            }, c -> c, "no common TLS version");
        }
    }

    /** Where the broker dials, and when each of its connections arrived (monotonic nanoseconds). */
    private interface Accepts {
        URI url();

        long awaitAccept();
    }

    private static void failsAndBacksOff(Accepts router, UnaryOperator<RelayConfig.Builder> config, String what)
            throws Exception {
        CountingMetrics metrics = new CountingMetrics();
        RelayConfig.Builder b = RelayConfig.builder()
                .busUrl(router.url())
                .caCertificates(() -> List.of(PKI.caCertificate()))
                .credential(() -> Credential.of(BrokerHarness.CREDENTIAL))
                .clientId("broker-a")
                .kubernetesNamespace("gpu-serving")
                .dynamoNamespaces(List.of(BrokerHarness.NAMESPACE))
                .reconnectBackoff(BACKOFF, BACKOFF)
                .busConnectTimeout(Duration.ofSeconds(10));
        Secrets.register(BrokerHarness.CREDENTIAL);
        try (LogLines logs = LogLines.capture("io.continuum.broker.relay",
                new EventFormatter(EventFormatter.Style.LOGFMT, false), null);
             EventBroker broker = EventBroker.create(config.apply(b).build(), new MutableView().synced(true), metrics,
                     BusConnector.of(TransportSettings.defaults()), RandomGenerator.getDefault())) {
            broker.start();
            List<Long> accepts = new ArrayList<>();
            for (int i = 0; i < ATTEMPTS; i++) {
                accepts.add(router.awaitAccept());
            }
            Map<String, String> ended = Logfmt.parse(logs.await(l -> "session_ended".equals(Logfmt.parse(l).get("event"))
                    && "connect_failed".equals(Logfmt.parse(l).get("reason")), BrokerHarness.WAIT));
            assertTrue("failed".equals(ended.get("result")) && ended.get("detail").contains(what),
                    "the log line says what failed (" + what + "): " + ended);
            Map<String, String> scheduled = Logfmt.parse(logs.await(
                    l -> "reconnect_scheduled".equals(Logfmt.parse(l).get("event")), BrokerHarness.WAIT));
            assertEquals(String.valueOf(BACKOFF.toMillis()), scheduled.get("delay_ms"), scheduled.toString());
            assertEquals("connect_failed", scheduled.get("after"), scheduled.toString());
            Poll.await(() -> metrics.get("session_attempts_total{result=failed}") >= ATTEMPTS - 1
                    && metrics.get("session_ends_total{reason=connect_failed}") >= ATTEMPTS - 1, "failures counted");
            assertEquals(0, metrics.get("session_attempts_total{result=welcomed}"));
            assertEquals(0, metrics.get("session_attempts_total{result=refused}"));
            for (int i = 1; i < accepts.size(); i++) {
                long gap = accepts.get(i) - accepts.get(i - 1);
                assertTrue(gap >= BACKOFF.toNanos(), "attempt " + (i + 1) + " came "
                        + TimeUnit.NANOSECONDS.toMillis(gap) + " ms after the previous one, not after the "
                        + BACKOFF.toMillis() + " ms backoff");
            }
        }
    }

    /** A JDK server socket on the bus port that is not a usable router; records when each connection arrives. */
    private static final class BusPortServer implements Accepts, AutoCloseable {
        private final LinkedBlockingQueue<Long> accepts = new LinkedBlockingQueue<>();
        private final List<Socket> sockets = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final AcceptLoop loop;

        private BusPortServer(ServerSocket server, SocketHandler handler) {
            this.loop = AcceptLoop.start("bad-router-accept", server, s -> {
                accepts.add(System.nanoTime());
                sockets.add(s);
                Thread.ofVirtual().name("bad-router-conn").start(() -> {
                    try (s) {
                        s.setSoTimeout(20_000);
                        handler.handle(s);
                    } catch (IOException expected) {
                        // the broker hangs up
                    }
                });
            });
        }

        interface SocketHandler {
            void handle(Socket s) throws IOException;
        }

        /** TLS with the given certificate, offering exactly these ALPN protocols (none: no ALPN at all). */
        static BusPortServer tls(ServerIdentity identity, String... alpn) throws IOException {
            SSLServerSocket listener = (SSLServerSocket) identity.serverContext().getServerSocketFactory()
                    .createServerSocket(0, 16, InetAddress.getLoopbackAddress());
            if (alpn.length > 0) {
                var parameters = listener.getSSLParameters();
                parameters.setApplicationProtocols(alpn);
                listener.setSSLParameters(parameters);
            }
            return new BusPortServer(listener, s -> {
                ((SSLSocket) s).startHandshake();
                s.getInputStream().read();
            });
        }

        /** A plaintext HTTP/1.1 server: answers whatever arrives with 400 and closes, as a web server would. */
        static BusPortServer plaintextHttp11() throws IOException {
            ServerSocket listener = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
            return new BusPortServer(listener, s -> {
                InputStream in = s.getInputStream();
                in.read(new byte[4096]); // the TLS ClientHello, unreadable as a request line
                OutputStream out = s.getOutputStream();
                out.write(("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n"
                        + "Connection: close\r\n\r\nBad Request").getBytes(StandardCharsets.US_ASCII));
                out.flush();
            });
        }

        @Override
        public URI url() {
            return URI.create("https://localhost:" + loop.port());
        }

        @Override
        public long awaitAccept() {
            return BrokerHarness.takeWithinWait(accepts, "the broker did not dial the bus port");
        }

        @Override
        public void close() throws IOException {
            loop.close();
            for (Socket s : sockets) {
                s.close();
            }
        }
    }
}
