package io.continuum.broker.testing.bus;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.continuum.broker.protocol.BusProtocol;
import io.continuum.broker.testing.router.HelidonServerStreams;
import io.helidon.common.tls.Tls;
import io.helidon.http.Status;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.helidon.webserver.http2.Http2Config;

/** The {@link InProcessRouter}'s server on Helidon's WebServer. */
final class HelidonBusServer implements BusServer {
    private final WebServer server;

    HelidonBusServer(Options o, Exchange.Handler handler) {
        Tls tls = Tls.builder()
                .privateKey(o.key())
                .privateKeyCertChain(o.chain())
                .applicationProtocols(List.of("h2"))
                .build();
        server = WebServer.builder()
                .host("127.0.0.1")
                .port(o.port())
                .connectionOptions(c -> c.tcpNoDelay(o.tcpNoDelay()))
                .tls(tls)
                .addProtocol(Http2Config.builder()
                        .flowControlTimeout(Duration.ofMinutes(10))
                        .maxConcurrentStreams(o.maxConcurrentStreams())
                        // Helidon's server stops reading the whole connection once 32 frames queue on one
                        // unread stream; a 64 KiB window keeps an unread stream from getting there.
                        .initialWindowSize(65_535)
                        .maxRapidResets(1_000_000)
                        .build())
                .routing(r -> r
                        .post(BusProtocol.SESSION_PATH, (req, res) -> handler.serve(new HelidonExchange(req, res)))
                        .post(BusProtocol.STREAM_PATH_PREFIX + "{id}",
                                (req, res) -> handler.serve(new HelidonExchange(req, res))))
                .build()
                .start();
    }

    @Override
    public int port() {
        return server.port();
    }

    @Override
    public void goAway() {
        throw new UnsupportedOperationException("Helidon's server has no graceful GOAWAY of its own");
    }

    @Override
    public void close() {
        server.stop();
    }

    /** One Helidon request, as an {@link Exchange}. */
    private record HelidonExchange(ServerRequest req, ServerResponse res) implements Exchange {
        @Override
        public String path() {
            return req.path().path();
        }

        @Override
        public Map<String, String> headers() {
            Map<String, String> headers = new HashMap<>();
            req.headers().forEach(h -> headers.put(h.name().toLowerCase(Locale.ROOT), h.get()));
            return headers;
        }

        @Override
        public InputStream requestBody() {
            return req.content().inputStream();
        }

        @Override
        public void respond(int status, Map<String, String> headers, byte[] body) {
            headers.forEach(res::header);
            res.status(Status.create(status)).send(body);
        }

        @Override
        public OutputStream startResponse(int status, Map<String, String> headers) throws IOException {
            headers.forEach(res::header);
            res.status(Status.create(status));
            OutputStream out = res.outputStream();
            HelidonServerStreams.flushHeaders(res);
            return out;
        }

        @Override
        public void informational(int status, Map<String, String> headers) {
            throw new UnsupportedOperationException("Helidon's server sends no informational head on request");
        }

        @Override
        public void reset() {
            HelidonServerStreams.reset(res);
        }

        @Override
        public void openConnectionWindow(int increment) {
            HelidonServerStreams.openConnectionWindow(res, increment);
        }
    }
}
