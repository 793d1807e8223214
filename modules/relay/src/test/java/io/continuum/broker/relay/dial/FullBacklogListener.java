package io.continuum.broker.relay.dial;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;

/**
 * A loopback listener that never accepts and whose accept queue is full, so a further connect to
 * it hangs (Linux drops the SYN and the client retransmits) until the connect timeout: the local
 * stand-in for a blackholed publisher address, which loopback cannot offer otherwise.
 */
public final class FullBacklogListener implements AutoCloseable {
    private final ServerSocket server;
    private final List<Socket> fillers = new ArrayList<>();

    /** On the loopback address. */
    public FullBacklogListener() throws IOException {
        this(InetAddress.getLoopbackAddress());
    }

    /**
     * @param bindAddress where to listen; {@code null} for the wildcard, so connects to every address of
     *                    127.0.0.0/8 hang (a thousand blackholed publishers on one port)
     */
    public FullBacklogListener(InetAddress bindAddress) throws IOException {
        server = new ServerSocket();
        server.bind(new InetSocketAddress(bindAddress, 0), 1);
        for (int i = 0; i < 64; i++) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()), 250);
                fillers.add(s);
            } catch (SocketTimeoutException full) {
                s.close();
                return;
            }
        }
        throw new IllegalStateException("accept queue never filled up; cannot simulate a hanging connect here");
    }

    public InetAddress address() {
        return server.getInetAddress();
    }

    public int port() {
        return server.getLocalPort();
    }

    @Override
    public void close() throws IOException {
        for (Socket s : fillers) {
            s.close();
        }
        server.close();
    }
}
