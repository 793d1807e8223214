package io.continuum.broker.relay.dial;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.testing.net.AcceptLoop;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A listener on the wildcard address (dual-stack, so it receives connections to 127.0.0.0/8, ::1,
 * 0.0.0.0 and ::) that records every accepted connection. Refused targets are given this
 * listener's port, so a dial that should not have happened but reached this host would land here.
 * <p>
 * {@link #acceptedBeforeSentinel()} proves the absence of connections without sleeping: it
 * connects a sentinel and takes accepted connections until the sentinel arrives. The kernel's
 * accept queue is FIFO, so every connection established before the sentinel is accepted before it.
 */
public final class AcceptRecorder implements AutoCloseable {
    private final BlockingQueue<Socket> accepted = new LinkedBlockingQueue<>();
    private final List<Socket> all = new CopyOnWriteArrayList<>();
    private final AcceptLoop loop;

    /**
     * Listens on the wildcard address, any free port.
     *
     * @throws IOException when it cannot listen
     */
    public AcceptRecorder() throws IOException {
        ServerSocket server = new ServerSocket();
        server.bind(new InetSocketAddress((InetAddress) null, 0), 64);
        loop = AcceptLoop.start("accept-recorder", server, s -> {
            all.add(s);
            accepted.add(s);
        });
    }

    /** @return the listening port */
    public int port() {
        return loop.port();
    }

    /**
     * Connects a sentinel and returns the connections accepted before it (and consumed by this
     * call).
     */
    public List<Socket> acceptedBeforeSentinel() throws IOException, InterruptedException {
        List<Socket> before = new ArrayList<>();
        try (Socket sentinel = new Socket()) {
            sentinel.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port()), 10_000);
            int sentinelPort = sentinel.getLocalPort();
            while (true) {
                Socket s = accepted.poll(30, TimeUnit.SECONDS);
                if (s == null) {
                    throw new AssertionError("sentinel connection never accepted");
                }
                if (s.getPort() == sentinelPort) {
                    // the sentinel's own accepted end is closed now, so a leak check after the test sees nothing
                    all.remove(s);
                    s.close();
                    return before;
                }
                before.add(s);
            }
        }
    }

    @Override
    public void close() throws IOException {
        loop.close();
        for (Socket s : all) {
            s.close();
        }
    }

    /**
     * One recorder for a whole test class ({@code @RegisterExtension static final AcceptRecorder.PerClass}):
     * listening before the class's first test, closed after its last.
     */
    public static final class PerClass implements BeforeAllCallback, AfterAllCallback {
        private AcceptRecorder recorder;

        @Override
        public void beforeAll(ExtensionContext context) throws IOException {
            recorder = new AcceptRecorder();
        }

        @Override
        public void afterAll(ExtensionContext context) throws IOException {
            recorder.close();
        }

        /** @see AcceptRecorder#port() */
        public int port() {
            return recorder.port();
        }

        /** @see AcceptRecorder#acceptedBeforeSentinel() */
        public List<Socket> acceptedBeforeSentinel() throws IOException, InterruptedException {
            return recorder.acceptedBeforeSentinel();
        }
    }
}
