package io.continuum.broker.relay.dial;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * The one connect step of {@link UpstreamDialer}: connects an unconnected socket to a resolved
 * address. The default is {@link Socket#connect(java.net.SocketAddress, int)}; tests wrap it to
 * record every attempt or replace it to simulate a connect that hangs (a blackholed address is
 * not available on loopback).
 */
@FunctionalInterface
public interface Connector {
    /** The JDK's blocking connect, bounded by the timeout. */
    Connector SYSTEM = Socket::connect;

    /**
     * Connects.
     *
     * @param socket        unconnected socket with options applied
     * @param remote        resolved address and port (never unresolved)
     * @param timeoutMillis upper bound for this attempt, at least 1
     * @throws IOException when the attempt fails or times out
     */
    void connect(Socket socket, InetSocketAddress remote, int timeoutMillis) throws IOException;
}
