package io.continuum.broker.bench.soak;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * A loopback TCP publisher for the soak: every accepted connection gets {@link #RECORD_BYTES}-byte records
 * carrying a sequence number that starts at 0, at a fixed rate, so the router side can prove that nothing
 * was lost, duplicated or reordered on a stream (it stands in for a ZMQ PUB; the broker never parses
 * ZMTP, so a byte stream with a checkable structure tests the tunnel more strictly). What the router
 * writes back is read and discarded. {@link #close()} is the publisher going away (pod deleted).
 */
final class SoakPublisher implements AutoCloseable {
    static final int RECORD_BYTES = 64;

    private final ServerSocket server;
    private final long periodNanos;
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    SoakPublisher(int messagesPerSecond) throws IOException {
        this.server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        this.periodNanos = 1_000_000_000L / messagesPerSecond;
        Thread.ofVirtual().name("soak-pub-accept-" + port()).start(this::acceptLoop);
    }

    int port() {
        return server.getLocalPort();
    }

    private void acceptLoop() {
        try {
            while (!closed) {
                Socket s = server.accept();
                connections.add(s);
                Thread.ofVirtual().name("soak-pub-write").start(() -> write(s));
                Thread.ofVirtual().name("soak-pub-read").start(() -> drain(s));
            }
        } catch (IOException e) {
            // closed
        }
    }

    private void write(Socket s) {
        byte[] record = new byte[RECORD_BYTES];
        ByteBuffer view = ByteBuffer.wrap(record);
        try (s) {
            s.setTcpNoDelay(true);
            OutputStream out = s.getOutputStream();
            long next = System.nanoTime();
            for (long seq = 0; !closed; seq++) {
                view.putLong(0, seq);
                out.write(record);
                next += periodNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
            }
        } catch (IOException e) {
            // the broker closed the stream (unsubscribe, revocation, session end)
        } finally {
            connections.remove(s);
        }
    }

    private static void drain(Socket s) {
        byte[] buf = new byte[4096];
        try {
            InputStream in = s.getInputStream();
            while (in.read(buf) >= 0) {
                // discard what the router sends
            }
        } catch (IOException e) {
            // closed
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        for (Socket s : connections) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }
}
