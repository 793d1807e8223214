package io.continuum.broker.testing.router;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import io.continuum.broker.testing.pki.ServerIdentity;
import io.helidon.http.Header;
import io.helidon.http.http2.Http2ErrorCode;
import io.helidon.http.http2.Http2Exception;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.helidon.webserver.http2.Http2Config;

/**
 * An in-process bus router for tests: Helidon WebServer, TLS with an {@link io.continuum.broker.testing.pki
 * ephemeral} certificate, HTTP/2 (ALPN h2), serving {@code POST /bus/v1/session} and
 * {@code POST /bus/v1/streams/{id}}. Clients reach it through a {@link TcpFaultProxy} so tests can cut or
 * black-hole the connection. Every accepted stream goes to a {@link RouterHandler}; the default queues it for
 * the test ({@link #nextStream}).
 */
public final class TestRouter implements AutoCloseable {
    /** The session stream's path. */
    public static final String SESSION_PATH = "/bus/v1/session";
    /** Prefix of data stream paths. */
    public static final String STREAMS_PATH = "/bus/v1/streams/";
    /** The header carrying the session id on data streams. */
    public static final String SESSION_HEADER = "continuum-session-id";

    private final WebServer server;
    private final TcpFaultProxy proxy;
    private final BlockingQueue<RouterStream> accepted = new LinkedBlockingQueue<>();
    private final List<RouterStream> all = java.util.Collections.synchronizedList(new ArrayList<>());
    private final AtomicReference<String> sessionId = new AtomicReference<>();
    private final RouterHandler sessionHandler;
    private final RouterHandler streamHandler;

    private TestRouter(Builder builder) throws IOException {
        this.sessionHandler = builder.sessionHandler != null ? builder.sessionHandler : accepted::add;
        this.streamHandler = builder.streamHandler != null ? builder.streamHandler : accepted::add;
        this.sessionId.set(builder.sessionId);
        ServerIdentity identity = builder.identity;
        this.server = WebServer.builder()
                .host("127.0.0.1")
                .port(0)
                .tls(t -> t.privateKey(identity.key()).privateKeyCertChain(List.of(identity.certificate(),
                        identity.ca())))
                .addProtocol(Http2Config.builder()
                        .maxConcurrentStreams(builder.maxConcurrentStreams)
                        .initialWindowSize(builder.initialWindowSize)
                        .flowControlTimeout(builder.flowControlTimeout)
                        .maxRapidResets(100_000)
                        .maxEmptyFrames(100_000)
                        .build())
                .routing(r -> r.post(SESSION_PATH, (req, res) -> serve(req, res, sessionHandler))
                        .post(STREAMS_PATH + "{id}", (req, res) -> serve(req, res, streamHandler)))
                .build()
                .start();
        this.proxy = new TcpFaultProxy(new InetSocketAddress("127.0.0.1", server.port()));
    }

    /**
     * @param identity the server certificate and key
     */
    public static Builder builder(ServerIdentity identity) {
        return new Builder(identity);
    }

    /** @return {@code https://localhost:<port>} through the fault proxy */
    public URI busUrl() {
        return URI.create("https://localhost:" + proxy.port());
    }

    /** @return the router's own port (no fault proxy) */
    public int directPort() {
        return server.port();
    }

    /**
     * @param id session id data streams must carry in {@code continuum-session-id}; {@code null}: no check
     */
    public void expectSessionId(String id) {
        sessionId.set(id);
    }

    /**
     * @param timeout how long to wait
     * @return the next accepted stream (default handlers only)
     * @throws TimeoutException when none arrives in time
     */
    public RouterStream nextStream(Duration timeout) throws TimeoutException, InterruptedException {
        RouterStream stream = accepted.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (stream == null) {
            throw new TimeoutException("no stream accepted within " + timeout);
        }
        return stream;
    }

    /** Cuts every client connection at the TCP level. */
    public void cutConnections() {
        proxy.cutAll();
    }

    /**
     * @param on swallow all bytes both ways, keep connections open (a silently dead peer)
     */
    public void blackhole(boolean on) {
        proxy.blackhole(on);
    }

    @Override
    public void close() {
        synchronized (all) {
            all.forEach(RouterStream::abandon);
        }
        proxy.close();
        server.stop();
    }

    private void serve(ServerRequest req, ServerResponse res, RouterHandler handler) throws Exception {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (Header header : req.headers()) {
            headers.computeIfAbsent(header.name().toLowerCase(Locale.ROOT), k -> new ArrayList<>())
                    .addAll(header.allValues());
        }
        RouterStream stream = new RouterStream(req, res, headers);
        String expected = sessionId.get();
        if (handler == streamHandler && expected != null
                && !expected.equals(stream.header(SESSION_HEADER).orElse(null))) {
            res.status(404).send("unknown_stream");
            return;
        }
        all.add(stream);
        handler.accept(stream);
        RouterStream.Outcome outcome = stream.awaitOutcome();
        if (outcome instanceof RouterStream.Outcome.Reset) {
            // RST_STREAM already written; unwind without a response
            throw new CloseConnectionException("test reset",
                    new Http2Exception(Http2ErrorCode.CANCEL, "reset by test"));
        }
    }

    /**
     * The largest receive window (65,535, the protocol's default) below four frames of 16 KiB, where Helidon
     * 4.5.0's server sends a WINDOW_UPDATE for each read instead of batching them. Its batching keeps the sum in
     * a counter without synchronization, so two stream handlers reading at once can make it send an increment
     * of 0, a protocol error the client rightly ends the connection for (RFC 9113 section 6.9). Tests with
     * many streams reading at once use this window.
     */
    public static final int UNBATCHED_WINDOW = 65_535;

    /** Options of a {@link TestRouter}. */
    public static final class Builder {
        private final ServerIdentity identity;
        private long maxConcurrentStreams = 8192;
        private int initialWindowSize = 1024 * 1024;
        private Duration flowControlTimeout = Duration.ofMinutes(5);
        private RouterHandler sessionHandler;
        private RouterHandler streamHandler;
        private String sessionId;

        private Builder(ServerIdentity identity) {
            this.identity = identity;
        }

        /**
         * @param n SETTINGS_MAX_CONCURRENT_STREAMS the router advertises
         */
        public Builder maxConcurrentStreams(long n) {
            this.maxConcurrentStreams = n;
            return this;
        }

        /**
         * @param bytes the router's receive window (65,535 keeps its connection window at 64 KiB too)
         */
        public Builder initialWindowSize(int bytes) {
            this.initialWindowSize = bytes;
            return this;
        }

        /**
         * @param timeout how long a router write may wait for the client's window (raise for stalling tests)
         */
        public Builder flowControlTimeout(Duration timeout) {
            this.flowControlTimeout = timeout;
            return this;
        }

        /**
         * @param handler what to do with session streams (default: queue for the test)
         */
        public Builder sessionHandler(RouterHandler handler) {
            this.sessionHandler = handler;
            return this;
        }

        /**
         * @param handler what to do with data streams (default: queue for the test)
         */
        public Builder streamHandler(RouterHandler handler) {
            this.streamHandler = handler;
            return this;
        }

        /**
         * @param id session id data streams must carry, or {@code null}
         */
        public Builder sessionId(String id) {
            this.sessionId = id;
            return this;
        }

        /** @return a started router */
        public TestRouter start() {
            try {
                return new TestRouter(this);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
