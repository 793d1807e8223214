package io.continuum.broker.relay.target;

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
final class FullBacklogListener implements AutoCloseable {
    private final ServerSocket server;
    private final List<Socket> fillers = new ArrayList<>();

    FullBacklogListener() throws IOException {
        server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
        for (int i = 0; i < 64; i++) {
            Socket s = new Socket();
            try {
                s.connect(server.getLocalSocketAddress(), 250);
                fillers.add(s);
            } catch (SocketTimeoutException full) {
                s.close();
                return;
            }
        }
        throw new IllegalStateException("accept queue never filled up; cannot simulate a hanging connect here");
    }

    InetAddress address() {
        return server.getInetAddress();
    }

    int port() {
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
