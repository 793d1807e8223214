package io.continuum.broker.testing.net;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A TCP peer a test takes connections from, one at a time: an {@link AcceptLoop} that queues what it accepts. A
 * publisher that only needs to be reached, a router port that should stay silent, a listener whose first connection
 * the test reads: each is this, so each closes the way {@link AcceptLoop#close} does (the port refuses connections
 * once it returns) and each accepted connection closes with it.
 */
public final class LoopbackListener implements AutoCloseable {
    /** How long {@link #awaitConnection()} waits: a bound for a stuck test, never a timing assertion. */
    public static final Duration WAIT = Duration.ofSeconds(30);

    private final LinkedBlockingQueue<Socket> accepted = new LinkedBlockingQueue<>();
    /** Every connection ever accepted, those handed out too: all are closed with the listener. */
    private final List<Socket> all = new CopyOnWriteArrayList<>();
    private final AcceptLoop loop;

    private LoopbackListener(String name, ServerSocket bound) {
        this.loop = AcceptLoop.start(name, bound, socket -> {
            all.add(socket);
            accepted.add(socket);
        });
    }

    /**
     * @param name    the accepting thread's name
     * @param backlog how many connections the kernel queues before the loop accepts them
     * @return a listener on a free loopback port
     */
    public static LoopbackListener open(String name, int backlog) {
        return open(name, backlog, InetAddress.getLoopbackAddress());
    }

    /**
     * @param name    the accepting thread's name
     * @param backlog how many connections the kernel queues before the loop accepts them
     * @param address the one local address to listen on (another loopback address, say)
     * @return a listener on a free port of that address
     */
    public static LoopbackListener open(String name, int backlog, InetAddress address) {
        try {
            return new LoopbackListener(name, new ServerSocket(0, backlog, address));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + address, e);
        }
    }

    /**
     * @param name the accepting thread's name
     * @return a listener on a free loopback port with a backlog of 50
     */
    public static LoopbackListener open(String name) {
        return open(name, 50);
    }

    /**
     * @param name  the accepting thread's name
     * @param bound a bound listener (a given port or address), now owned by this one
     * @return the listener
     */
    public static LoopbackListener on(String name, ServerSocket bound) {
        return new LoopbackListener(name, bound);
    }

    /** @return the listening port */
    public int port() {
        return loop.port();
    }

    /**
     * The next accepted connection, waiting up to {@link #WAIT}.
     *
     * @return the connection; it still closes with the listener
     * @throws AssertionError if none came
     */
    public Socket awaitConnection() {
        return awaitConnection(WAIT);
    }

    /**
     * The next accepted connection.
     *
     * @param within how long to wait
     * @return the connection; it still closes with the listener
     * @throws AssertionError if none came
     */
    public Socket awaitConnection(Duration within) {
        try {
            Socket next = accepted.poll(within.toNanos(), TimeUnit.NANOSECONDS);
            if (next == null) {
                throw new AssertionError("no connection to port " + port() + " within " + within);
            }
            return next;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for a connection", e);
        }
    }

    /** @return connections accepted and not yet taken */
    public int pendingConnections() {
        return accepted.size();
    }

    /** Closes the listener (returning once its port refuses connections) and every accepted connection. */
    @Override
    public void close() {
        loop.close();
        for (Socket s : all) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
