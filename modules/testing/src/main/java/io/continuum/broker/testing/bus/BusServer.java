package io.continuum.broker.testing.bus;

import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;

/** The listening HTTP/2 server of an {@link InProcessRouter}, on one {@link Http2Stack}. */
interface BusServer extends AutoCloseable {
    /** How the router's server listens. */
    record Options(PrivateKey key, List<X509Certificate> chain, int port, boolean tcpNoDelay,
                   long maxConcurrentStreams) {
    }

    /** @return the port it listens on (127.0.0.1) */
    int port();

    /**
     * Sends a graceful GOAWAY (NO_ERROR) on every open connection: the streams already open run on, no new one is
     * accepted there.
     *
     * @throws UnsupportedOperationException on a stack that offers no such call
     */
    void goAway();

    /** Stops listening and closes every connection. */
    @Override
    void close();
}
