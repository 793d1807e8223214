package io.continuum.broker.app.observe;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataReader;
import io.helidon.common.buffers.DataWriter;
import io.helidon.common.socket.HelidonSocket;
import io.helidon.common.socket.PeerInfo;
import io.helidon.http.Headers;
import io.helidon.http.HeaderValues;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.ListenerContext;
import io.helidon.webserver.ProxyProtocolData;
import io.helidon.webserver.Router;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.http1.Http1ConnectionListener;
import io.helidon.webserver.http1.Http1ConnectionSelector;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.spi.ServerConnectionSelector;

/**
 * The observability port's only connection selector: Helidon 4.5.0's own HTTP/1.1 connection, with the two
 * things a plain HTTP/1.x server does and it does not.
 * <ul>
 *     <li><b>{@code Connection: close} ends the connection.</b> Helidon 4.5.0 answers such a request with
 *     {@code Connection: close} and then waits for the next request on the same socket (fixed upstream after
 *     4.5.3). A receive listener sees each request's headers before routing and, for a request that asks to
 *     close, tells the connection to stop after this request ({@link ServerConnection#close(boolean)} without
 *     interrupt: the connection is routing, not reading, so nothing is cut short). The response is written
 *     by the routing on the connection's thread; the connection loop then ends and the server closes the
 *     socket.</li>
 *     <li><b>HTTP/1.0 is answered.</b> Helidon 4.5.0 answers any {@code HTTP/1.0} request line with
 *     {@code 505}, which RFC 9110 section 15.6.6 reserves for a major version the server does not support.
 *     The connection's first request, when it is HTTP/1.0, is presented to Helidon as the HTTP/1.1 request
 *     it is equivalent to: version {@code HTTP/1.1}, {@code Connection: close} (this server keeps no 1.0
 *     connection alive, which a server may always do) and, when the client sent none, a {@code Host}
 *     header (optional in 1.0, required in 1.1). The answer is an HTTP/1.1 response framed by
 *     {@code Content-Length} (every route here sends a complete body), which a 1.0 client reads (RFC 9110
 *     section 6.2). Only the first request of a connection can be 1.0: a 1.0 request after a 1.1 request on
 *     a kept-alive connection still gets Helidon's 505, which no health checker sends.</li>
 * </ul>
 * Nothing here reaches into Helidon's internals: the selector SPI, {@link Http1ConnectionSelector} and
 * {@link Http1ConnectionListener} are exported API of Helidon 4.5.0, and the bytes are rewritten in front of
 * the connection's {@link DataReader}. No HTTP/2 and no upgrade on this port.
 */
final class PlainHttp1 implements ServerConnectionSelector {
    private final Http1ConnectionSelector http1;
    private final int maxHeadBytes;

    private PlainHttp1(Http1Config config) {
        this.http1 = Http1ConnectionSelector.builder().config(config).build();
        this.maxHeadBytes = config.maxPrologueLength() + config.maxHeadersSize();
    }

    /**
     * The selector, on Helidon's default HTTP/1 configuration.
     *
     * @return selector
     */
    static PlainHttp1 create() {
        return new PlainHttp1(Http1Config.builder()
                                      .addReceiveListener(new CloseAfterRequest())
                                      .build());
    }

    @Override
    public int bytesToIdentifyConnection() {
        return 0;
    }

    @Override
    public Support supports(BufferData data) {
        // The only selector of its listener: every connection is HTTP/1.x here.
        return Support.SUPPORTED;
    }

    @Override
    public Set<String> supportedApplicationProtocols() {
        return Set.of("http/1.1");
    }

    @Override
    public ServerConnection connection(ConnectionContext ctx) {
        Context context = new Context(ctx, DataReader.create(new Http10Front(ctx.dataReader(), maxHeadBytes)));
        ServerConnection connection = http1.connection(context);
        context.connection = connection;
        return connection;
    }

    /** Sees every request's headers on the connection's thread, after the request line, before routing. */
    private static final class CloseAfterRequest implements Http1ConnectionListener {
        @Override
        public void headers(ConnectionContext ctx, Headers headers) {
            if (ctx instanceof Context c && headers.containsToken(HeaderValues.CONNECTION_CLOSE)) {
                c.closeAfterThisRequest();
            }
        }
    }

    /** The server's connection context with the rewriting reader in front, and a way back to the connection. */
    private static final class Context implements ConnectionContext {
        private final ConnectionContext delegate;
        private final DataReader reader;
        private volatile ServerConnection connection;

        Context(ConnectionContext delegate, DataReader reader) {
            this.delegate = delegate;
            this.reader = reader;
        }

        void closeAfterThisRequest() {
            ServerConnection c = connection;
            if (c != null) {
                // canRun = false: the request being routed completes, then the connection loop ends.
                c.close(false);
            }
        }

        @Override
        public DataReader dataReader() {
            return reader;
        }

        @Override
        public ListenerContext listenerContext() {
            return delegate.listenerContext();
        }

        @Override
        public ExecutorService executor() {
            return delegate.executor();
        }

        @Override
        public DataWriter dataWriter() {
            return delegate.dataWriter();
        }

        @Override
        public Router router() {
            return delegate.router();
        }

        @Override
        public Optional<ProxyProtocolData> proxyProtocolData() {
            return delegate.proxyProtocolData();
        }

        @Override
        public HelidonSocket serverSocket() {
            return delegate.serverSocket();
        }

        @Override
        public PeerInfo remotePeer() {
            return delegate.remotePeer();
        }

        @Override
        public PeerInfo localPeer() {
            return delegate.localPeer();
        }

        @Override
        public boolean isSecure() {
            return delegate.isSecure();
        }

        @Override
        public String socketId() {
            return delegate.socketId();
        }

        @Override
        public String childSocketId() {
            return delegate.childSocketId();
        }
    }
}
