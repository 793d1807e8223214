package io.continuum.broker.testing.net;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * A listener whose connections are accepted on one virtual thread and handed to a handler, and whose
 * {@link #close} returns only once the port refuses connections.
 * <p>
 * That last part is why this class exists. Closing a {@link ServerSocket} while a virtual thread is parked
 * in {@code accept()} does not close its descriptor: the JDK (NativeDispatcher.preClose) only wakes that
 * thread, and the thread closes the descriptor when it next runs on a carrier. On a busy machine that is
 * later, and until then the kernel still completes handshakes on the port, so a test peer that was "closed"
 * accepted the broker's next dial (twice in 13 clean-clone CI runs). Every test peer that listens uses this.
 */
public final class AcceptLoop implements AutoCloseable {
    /** What to do with each accepted connection; runs on the accepting thread, so hand long work off. */
    @FunctionalInterface
    public interface Handler {
        /**
         * @param socket the accepted connection, now owned by the handler
         * @throws IOException to drop this connection; the loop accepts the next one
         */
        void accepted(Socket socket) throws IOException;
    }

    private final ServerSocket listener;
    private final Thread acceptor;
    private volatile boolean closed;

    private AcceptLoop(String name, ServerSocket listener, Handler handler) {
        this.listener = listener;
        this.acceptor = Thread.ofVirtual().name(name).start(() -> run(handler));
    }

    /**
     * @param name     the accepting thread's name, as leak reports show it
     * @param listener a bound listener, now owned by the loop
     * @param handler  what to do with each connection
     * @return the running loop
     */
    public static AcceptLoop start(String name, ServerSocket listener, Handler handler) {
        return new AcceptLoop(name, listener, handler);
    }

    /** @return the listening port */
    public int port() {
        return listener.getLocalPort();
    }

    /** @return whether the accepting thread is parked, waiting for a connection (or for work to hand off) */
    public boolean parked() {
        return acceptor.getState() == Thread.State.WAITING;
    }

    /** @return whether {@link #close} has been called */
    public boolean closed() {
        return closed;
    }

    private void run(Handler handler) {
        while (!closed) {
            Socket socket;
            try {
                socket = listener.accept();
            } catch (IOException e) {
                if (closed || listener.isClosed()) {
                    return;
                }
                continue;
            }
            try {
                handler.accepted(socket);
            } catch (IOException | RuntimeException e) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // dropping it anyway
                }
            }
        }
    }

    /** Stops accepting; returns once the accepting thread has ended, so the port refuses connections. */
    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing
        }
        boolean interrupted = false;
        while (true) {
            try {
                acceptor.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
