package io.continuum.broker.app.observe;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import io.continuum.broker.app.config.ListenAddress;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import io.continuum.broker.relay.api.SessionState;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The observability port answers like a plain HTTP/1.x server, spoken to over a raw socket as HAProxy's
 * {@code httpchk}, Nagios {@code check_http} or a script reading to EOF would: a response to a request with
 * {@code Connection: close} is followed by the end of the connection, and an HTTP/1.0 request gets its answer
 * (RFC 9110 section 6.2: a 1.1 server answers a 1.0 request with a 1.1 response it can read, never
 * {@code 505}), framed by {@code Content-Length} and followed by the end of the connection.
 *
 * <p>Every read has a socket timeout: a connection the server keeps open fails the test with a message
 * instead of hanging it.
 */
class ObservabilityServerRawHttpTest {
    /** Far above any answer time on a loaded machine; only a server that never closes reaches it. */
    private static final int READ_TIMEOUT_MS = 20_000;

    private BrokerMetrics metrics;
    private ObservabilityServer server;

    @BeforeEach
    void start() {
        metrics = BrokerMetrics.create();
        server = ObservabilityServer.start(new ListenAddress("127.0.0.1", 0), () -> true,
                                           () -> new BrokerStatus(SessionState.CONNECTED,
                                                                  Instant.parse("2026-01-01T00:00:00Z"),
                                                                  "broker-a", "https://router:443",
                                                                  new BrokerStatus.Metadata(true, 0, 0),
                                                                  Optional.empty()),
                                           "1.2.3");
        server.serveMetrics(metrics);
    }

    @AfterEach
    void stop() {
        server.close();
        metrics.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"/healthz", "/readyz", "/statusz", "/metrics", "/no-such-path"})
    void http11ConnectionCloseEndsTheConnectionAfterTheResponse(String path) throws IOException {
        Response r = exchange("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        assertEquals(path.equals("/no-such-path") ? 404 : 200, r.status(), r.raw());
        assertEquals("HTTP/1.1", r.version());
        assertTrue(r.header("connection").toLowerCase(Locale.ROOT).contains("close"), r.raw());
        r.assertFramedByContentLength();
    }

    @ParameterizedTest
    @ValueSource(strings = {"/healthz", "/readyz", "/statusz", "/metrics", "/no-such-path"})
    void http10WithoutHostIsAnsweredAndTheConnectionEnds(String path) throws IOException {
        // HAProxy's and Nagios's defaults: an HTTP/1.0 request line, no Host header.
        Response r = exchange("GET " + path + " HTTP/1.0\r\n\r\n");
        assertEquals(path.equals("/no-such-path") ? 404 : 200, r.status(), r.raw());
        // A 1.0 client can read no chunked body: the length is in the head.
        r.assertFramedByContentLength();
    }

    @Test
    void http10WithHostAndKeepAliveIsAnsweredAndClosed() throws IOException {
        // A server may always close after a response; this one says so in the head.
        Response r = exchange("GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n"
                                      + "User-Agent: check_http/v2.3.3\r\n\r\n");
        assertEquals(200, r.status(), r.raw());
        assertEquals("ok\n", r.body());
        assertTrue(r.header("connection").toLowerCase(Locale.ROOT).contains("close"), r.raw());
    }

    @Test
    void http10RequestArrivingByteByByteIsAnswered() throws IOException {
        byte[] request = "GET /healthz HTTP/1.0\r\nUser-Agent: slow\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            for (byte b : request) {
                out.write(b);
                out.flush();
            }
            Response r = Response.parse(readToEof(s));
            assertEquals(200, r.status(), r.raw());
            assertEquals("ok\n", r.body());
        }
    }

    @Test
    void keepAliveStillServesSeveralRequestsUntilOneSaysClose() throws IOException {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write(("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                    + "GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                    + "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                              .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String all = readToEof(s);
            assertEquals(3, all.split("HTTP/1\\.1 200 OK", -1).length - 1, all);
            assertTrue(all.endsWith("ok\n"), all);
        }
    }

    @Test
    void http11WithoutHostIsStillABadRequest() throws IOException {
        // RFC 9112 section 3.2: the HTTP/1.0 leniency does not extend to 1.1.
        Response r = exchange("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
        assertEquals(400, r.status(), r.raw());
    }

    private Socket connect() throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", server.port()), READ_TIMEOUT_MS);
        s.setSoTimeout(READ_TIMEOUT_MS);
        return s;
    }

    private Response exchange(String request) throws IOException {
        try (Socket s = connect()) {
            s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return Response.parse(readToEof(s));
        }
    }

    /** Everything the server sends until it closes; a server that keeps the connection fails the test. */
    private static String readToEof(Socket s) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        InputStream in = s.getInputStream();
        byte[] buf = new byte[8192];
        try {
            int n;
            while ((n = in.read(buf)) != -1) {
                got.write(buf, 0, n);
            }
        } catch (SocketTimeoutException e) {
            fail("the server kept the connection open " + READ_TIMEOUT_MS + " ms after answering:\n"
                         + got.toString(StandardCharsets.ISO_8859_1));
        }
        return got.toString(StandardCharsets.ISO_8859_1);
    }

    private record Response(String raw, String version, int status, Map<String, String> headers, String body) {
        static Response parse(String raw) {
            int end = raw.indexOf("\r\n\r\n");
            assertTrue(end > 0, "no response head in:\n" + raw);
            String[] lines = raw.substring(0, end).split("\r\n");
            String[] statusLine = lines[0].split(" ", 3);
            Map<String, String> headers = new LinkedHashMap<>();
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                headers.merge(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                              lines[i].substring(colon + 1).trim(), (a, b) -> a + ", " + b);
            }
            return new Response(raw, statusLine[0], Integer.parseInt(statusLine[1]), headers,
                                raw.substring(end + 4));
        }

        String header(String name) {
            return headers.getOrDefault(name, "");
        }

        void assertFramedByContentLength() {
            assertFalse(headers.containsKey("transfer-encoding"), "chunked answer: " + raw);
            assertTrue(headers.containsKey("content-length"), "no content-length: " + raw);
            assertEquals(Integer.parseInt(header("content-length")), body.getBytes(StandardCharsets.ISO_8859_1).length,
                         "body length differs from content-length (or bytes followed the response): " + raw);
        }
    }
}
