package io.continuum.broker.relay.transport;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.List;

import io.continuum.broker.testing.net.LoopbackListener;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.transport.TransportFixture.PKI;
import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Issue 55 item 6: the whole TLS handshake is inside {@code bus_connect_timeout}. A "router" that answers the
 * ClientHello with the header of a 16 KiB handshake record and then one byte every 200 ms keeps every read of the
 * handshake under any per-read timeout; the connect still fails as {@code TIMEOUT} once the 1 s deadline passes.
 * Before, the socket's read timeout was the only bound, so the attempt would have waited for the whole record
 * (about an hour at that pace). The assertion is on the outcome; the test's own deadline only keeps a regression
 * from hanging the build.
 */
class HandshakeDeadlineTest {
    @Test
    void aServerThatTricklesItsHandshakeFailsTheConnectAtTheDeadline() throws Exception {
        try (LoopbackListener listener = LoopbackListener.open("trickle", 10)) {
            Thread trickler = Thread.ofVirtual().start(() -> {
                try (Socket socket = listener.awaitConnection()) {
                    OutputStream out = socket.getOutputStream();
                    byte[] header = {0x16, 0x03, 0x03, 0x40, 0x00}; // a handshake record of 16,384 bytes follows
                    out.write(header);
                    out.flush();
                    while (true) {
                        Thread.sleep(200);
                        out.write(0);
                        out.flush();
                    }
                } catch (IOException | InterruptedException | RuntimeException e) {
                    // the broker hung up
                }
            });
            BusEndpoint endpoint = new BusEndpoint(URI.create("https://localhost:" + listener.port()),
                    TlsTrust.certificates(List.of(PKI.caCertificate())), null, Duration.ofSeconds(1),
                    "continuum-event-broker/test");
            BusConnectException e = assertTimeoutPreemptively(WAIT, () -> assertThrows(BusConnectException.class,
                    () -> TransportFixture.connector().connect(endpoint)));
            assertEquals(BusConnectException.Kind.TIMEOUT, e.kind(), e.getMessage());
            trickler.join(WAIT);
        }
    }
}
