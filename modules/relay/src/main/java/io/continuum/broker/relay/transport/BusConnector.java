package io.continuum.broker.relay.transport;

/**
 * Dials the router: TCP, TLS (ALPN {@code h2} only) and the HTTP/2 preface and SETTINGS exchange,
 * all within {@link BusEndpoint#connectTimeout()}.
 */
public interface BusConnector {
    /**
     * Opens one connection to the bus.
     *
     * @param endpoint where and how to connect
     * @return an open connection, ready for {@link BusConnection#open}
     * @throws BusConnectException when TCP, TLS or HTTP/2 set-up fails or the deadline passes
     */
    BusConnection connect(BusEndpoint endpoint) throws BusConnectException;

    /**
     * The bus connector: one HTTP/2 connection of the transport's own per call, on the {@code h2} codec.
     *
     * @param settings windows, keepalive and the local stream cap
     * @return a connector with these settings
     */
    static BusConnector of(TransportSettings settings) {
        return new Http2BusConnector(settings);
    }
}
