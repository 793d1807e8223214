package io.continuum.broker.relay.transport;

import java.io.IOException;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.helidon.webclient.http2.Http2Client;
import io.helidon.webclient.http2.Http2ClientImpl;

/**
 * {@link BusConnector} on Helidon 4.5.0's HTTP/2 client. The whole set-up (TCP, TLS, HTTP/2 preface and the
 * peer's first SETTINGS) runs on one virtual thread and is bounded by {@link BusEndpoint#connectTimeout()}:
 * on expiry the socket is closed, which ends Helidon's own 20 s SETTINGS wait at once.
 */
public final class HelidonBusConnector implements BusConnector {
    private final TransportSettings settings;
    private final Http2ClientImpl client;

    /** With {@link TransportSettings#defaults()}. */
    public HelidonBusConnector() {
        this(TransportSettings.defaults());
    }

    /**
     * @param settings transport tunables
     */
    public HelidonBusConnector(TransportSettings settings) {
        this.settings = settings;
        this.client = (Http2ClientImpl) Http2Client.builder()
                .protocolConfig(p -> p.priorKnowledge(true)
                        // Helidon ties the connection window to this stream window: the transport opens it itself
                        .initialWindowSize(TransportSettings.STREAM_RECEIVE_WINDOW)
                        .maxFrameSize(Http2Frames.MAX_FRAME_PAYLOAD)
                        // the transport never lets Helidon block on flow control; if it ever did, its 15 s timeout
                        // must not fail a long-lived stream
                        .flowControlBlockTimeout(Duration.ofDays(3650))
                        .ping(false))
                .build();
    }

    @Override
    public BusConnection connect(BusEndpoint endpoint) throws BusConnectException {
        long deadline = System.nanoTime() + endpoint.connectTimeout().toNanos();
        AtomicReference<Socket> socket = new AtomicReference<>();
        CompletableFuture<HelidonBusConnection> result = new CompletableFuture<>();
        Thread.ofVirtual().name("bus-connect").start(() -> {
            try {
                result.complete(dial(endpoint, deadline, socket));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        try {
            return result.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            abandon(result, socket);
            throw new BusConnectException(BusConnectException.Kind.TIMEOUT,
                    "no HTTP/2 connection within " + endpoint.connectTimeout().toMillis() + " ms", null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abandon(result, socket);
            throw new BusConnectException(BusConnectException.Kind.TIMEOUT, "interrupted while connecting", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof BusConnectException b) {
                throw b;
            }
            throw new BusConnectException(BusConnectException.Kind.HTTP2,
                    "connection set-up failed: " + e.getCause().getClass().getSimpleName(), e.getCause());
        }
    }

    private HelidonBusConnection dial(BusEndpoint endpoint, long deadline, AtomicReference<Socket> socket)
            throws BusConnectException {
        TlsDialer.Dialed dialed = TlsDialer.dial(endpoint, deadline, socket::set);
        HelidonBusConnection connection;
        try {
            connection = new HelidonBusConnection(endpoint, settings, dialed, client);
        } catch (IOException e) {
            TlsDialer.closeQuietly(dialed.tcp());
            throw new BusConnectException(BusConnectException.Kind.TLS, "socket unusable: " + e.getMessage(), e);
        }
        try {
            connection.start();
            return connection;
        } catch (IOException e) {
            connection.close();
            throw new BusConnectException(BusConnectException.Kind.HTTP2, "HTTP/2 set-up failed: " + e.getMessage(),
                    e);
        } catch (BusConnectException | RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    private static void abandon(CompletableFuture<HelidonBusConnection> result, AtomicReference<Socket> socket) {
        TlsDialer.closeQuietly(socket.get());
        result.thenAccept(HelidonBusConnection::close);
    }
}
