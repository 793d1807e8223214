package io.continuum.broker.training;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One publisher on loopback, advertised in the API server: every connection the broker makes gets the bytes of its
 * {@link Load} until it ends. Raw bytes, not ZMTP: the broker relays what it reads and parses none of it (R-BEH),
 * so the cache's profile of the relay is the same.
 */
final class TrainingPublisher implements AutoCloseable {
    private final Load load;
    private final ServerSocket listener;
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();

    TrainingPublisher(Load load) throws IOException {
        this.load = load;
        this.listener = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("training-publisher-" + port()).start(this::acceptLoop);
    }

    int port() {
        return listener.getLocalPort();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket s = listener.accept();
                s.setTcpNoDelay(true);
                connections.add(s);
                Thread.ofVirtual().name("training-publisher-conn").start(() -> serve(s));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            if (load == Load.ECHO) {
                byte[] buf = new byte[8_192];
                int n;
                while ((n = in.read(buf)) > 0) {
                    out.write(buf, 0, n);
                }
                return;
            }
            Thread.ofVirtual().name("training-publisher-drain").start(() -> drain(in)); // what the router sends
            byte[] message = new byte[load.bytes()];
            for (int i = 0; i < message.length; i++) {
                message[i] = (byte) ('a' + i % 26);
            }
            int perSecond = load == Load.MESSAGES ? Load.MESSAGES_PER_SECOND : Load.CHUNKS_PER_SECOND;
            long start = System.nanoTime();
            long next = start;
            double credit = 0;
            while (true) {
                double ramp = Math.min(1.0, 0.1 + 0.9 * (next - start) / Load.RAMP.toNanos());
                credit += perSecond / 1_000.0 * ramp;
                for (; credit >= 1; credit--) {
                    out.write(message);
                }
                next += TimeUnit.MILLISECONDS.toNanos(1);
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
            }
        } catch (IOException e) {
            // the broker closed the connection, or this publisher closed
        } finally {
            connections.remove(s);
        }
    }

    private static void drain(InputStream in) {
        byte[] buf = new byte[4_096];
        try {
            while (in.read(buf) >= 0) {
                // discarded: a ZMQ publisher ignores what it does not subscribe
            }
        } catch (IOException e) {
            // closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Socket s : connections) {
            s.close();
        }
    }
}
