package io.continuum.broker.testing.router;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.continuum.broker.testing.net.AcceptLoop;

/**
 * A TCP relay in front of a test server that can fail the network the way real networks fail: cut every
 * connection at once (both ends see a reset/EOF), or black-hole them (bytes are swallowed, nothing is closed,
 * like a peer that vanished without a FIN).
 */
public final class TcpFaultProxy implements AutoCloseable {
    private final AcceptLoop listener;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean blackholed;
    private volatile long firstAnswerDelayNanos;
    private volatile boolean closed;

    /**
     * @param target where to relay to
     * @throws IOException when the listening socket cannot be opened
     */
    public TcpFaultProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.listener = AcceptLoop.start("fault-proxy-accept",
                new ServerSocket(0, 200, InetAddress.getLoopbackAddress()), this::relay);
    }

    /** @return the port clients connect to */
    public int port() {
        return listener.port();
    }

    /** Closes every relayed connection now; new ones are still accepted. */
    public void cutAll() {
        for (Socket socket : sockets) {
            close(socket);
        }
        sockets.clear();
    }

    /**
     * @param on whether bytes are swallowed in both directions (connections stay open)
     */
    public void blackhole(boolean on) {
        blackholed = on;
    }

    /**
     * Holds the first bytes the server sends on each new connection for {@code delay}: a TLS server that is
     * slow to answer the ClientHello (a slow handshake), while the client's bytes still flow at once.
     *
     * @param delay how long the server's first answer is held ({@link Duration#ZERO}: not at all)
     */
    public void delayFirstAnswer(java.time.Duration delay) {
        firstAnswerDelayNanos = delay.toNanos();
    }

    @Override
    public void close() {
        closed = true;
        listener.close();
        cutAll();
    }

    private void relay(Socket client) throws IOException {
        Socket server = new Socket();
        try {
            server.setTcpNoDelay(true);
            client.setTcpNoDelay(true);
            server.connect(target, 5_000);
        } catch (IOException e) {
            // the target is gone (closed before the proxy): hang up on the client too, leak neither
            close(server);
            throw e;
        }
        sockets.add(client);
        sockets.add(server);
        if (closed) {
            // close() ran while this connection was being set up: its cutAll() did not see it
            close(client);
            close(server);
            return;
        }
        long delay = firstAnswerDelayNanos;
        Thread.ofVirtual().name("fault-proxy-up").start(() -> pump(client, server, 0));
        Thread.ofVirtual().name("fault-proxy-down").start(() -> pump(server, client, delay));
    }

    private void pump(Socket from, Socket to, long firstDelayNanos) {
        byte[] buffer = new byte[32 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            boolean first = true;
            while ((n = in.read(buffer)) >= 0) {
                if (first && firstDelayNanos > 0) {
                    java.util.concurrent.TimeUnit.NANOSECONDS.sleep(firstDelayNanos);
                }
                first = false;
                if (!blackholed) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
        } catch (IOException e) {
            // cut or closed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            close(from);
            close(to);
            sockets.remove(from);
            sockets.remove(to);
        }
    }

    private static void close(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
