package io.continuum.broker.relay.transport;

import java.io.IOException;

/**
 * {@link BusConnector} for the connection this transport owns outright ({@link Http2BusConnection}): TCP and TLS
 * ({@link TlsDialer}), then the HTTP/2 preface and SETTINGS exchange on the project's frame codec, all within
 * {@link BusEndpoint#connectTimeout()}. {@link TransportSettings#connector()} makes one.
 */
final class Http2BusConnector implements BusConnector {
    private final TransportSettings settings;

    Http2BusConnector(TransportSettings settings) {
        this.settings = settings;
    }

    @Override
    public BusConnection connect(BusEndpoint endpoint) throws BusConnectException {
        long deadline = System.nanoTime() + endpoint.connectTimeout().toNanos();
        TlsDialer.Dialed dialed = TlsDialer.dial(endpoint, deadline, socket -> { });
        Http2BusConnection connection;
        try {
            connection = new Http2BusConnection(endpoint, settings, dialed);
        } catch (IOException e) {
            TlsDialer.closeQuietly(dialed.tls());
            TlsDialer.closeQuietly(dialed.tcp());
            throw new BusConnectException(BusConnectException.Kind.TLS, "socket unusable: " + e.getMessage(), e);
        }
        try {
            connection.start(deadline);
            return connection;
        } catch (BusConnectException | RuntimeException e) {
            connection.close();
            throw e;
        }
    }
}
