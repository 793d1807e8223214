package io.continuum.broker.testing.bus;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.helidon.webserver.CloseConnectionException;

/**
 * The router's end of one data stream ({@code POST /bus/v1/streams/{id}}, bus-protocol-v1.md
 * section 6): the broker's request body (publisher bytes) and the response body (bytes for the
 * publisher).
 */
public final class RouterDataStream {
    private final long streamId;
    private final Map<String, String> headers;
    private final InputStream fromBroker;
    private final OutputStream toBroker;
    private final Runnable resetter;
    private final java.util.concurrent.atomic.AtomicLong bridgedToBroker = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong bridgedFromBroker = new java.util.concurrent.atomic.AtomicLong();
    private final CountDownLatch requestDone = new CountDownLatch(1);
    private final CountDownLatch responseDone = new CountDownLatch(1);

    RouterDataStream(long streamId, Map<String, String> headers, InputStream fromBroker, OutputStream toBroker,
                     Runnable resetter) {
        this.streamId = streamId;
        this.headers = Map.copyOf(headers);
        this.fromBroker = new EndAwareInputStream(fromBroker, requestDone);
        this.toBroker = toBroker;
        this.resetter = resetter;
    }

    /**
     * Stream id.
     *
     * @return id
     */
    public long streamId() {
        return streamId;
    }

    /**
     * Request headers (lower-case names; the authorization value included, for assertions).
     *
     * @return headers
     */
    public Map<String, String> headers() {
        return headers;
    }

    /**
     * Publisher bytes, as the broker relays them. Ends when the broker ends the request body.
     *
     * @return input stream
     */
    public InputStream fromBroker() {
        return fromBroker;
    }

    /**
     * Bytes for the publisher.
     *
     * @return output stream (flush to send)
     */
    public OutputStream toBroker() {
        return toBroker;
    }

    /**
     * Reads exactly {@code n} bytes from the broker.
     *
     * @return the bytes
     * @throws IOException when the stream ends first
     */
    public byte[] readFromBroker(int n) throws IOException {
        byte[] b = fromBroker.readNBytes(n);
        if (b.length != n) {
            throw new IOException("stream " + streamId + " ended after " + b.length + " of " + n + " bytes");
        }
        return b;
    }

    /**
     * Writes and flushes bytes for the publisher.
     *
     * @throws IOException when the stream is gone
     */
    public void writeToBroker(byte[] bytes) throws IOException {
        toBroker.write(bytes);
        toBroker.flush();
    }

    /**
     * Relays this stream to and from a socket (for a real ZMQ subscriber on the router side),
     * each direction on its own virtual thread, until either side ends.
     *
     * @param socket accepted socket of the router-side subscriber
     */
    public void bridge(Socket socket) {
        Thread.ofVirtual().name("bridge-" + streamId + "-in").start(() -> {
            try (socket) {
                OutputStream out = socket.getOutputStream();
                byte[] buf = new byte[16 * 1024];
                int n;
                while ((n = fromBroker.read(buf)) >= 0) {
                    out.write(buf, 0, n);
                    bridgedFromBroker.addAndGet(n);
                }
            } catch (IOException | CloseConnectionException ignored) {
                // either side went away (Helidon reports a broker connection that closed under a read or a window
                // update with its own unchecked exception)
            } finally {
                end();
            }
        });
        Thread.ofVirtual().name("bridge-" + streamId + "-out").start(() -> {
            try {
                InputStream in = socket.getInputStream();
                byte[] buf = new byte[16 * 1024];
                int n;
                while ((n = in.read(buf)) >= 0) {
                    toBroker.write(buf, 0, n);
                    toBroker.flush();
                    bridgedToBroker.addAndGet(n);
                }
            } catch (IOException | CloseConnectionException ignored) {
                // either side went away (Helidon reports a broker connection that closed under a read or a window
                // update with its own unchecked exception)
            } finally {
                end();
            }
        });
    }

    /**
     * Dials a port on 127.0.0.1 where a peer listens (a JeroMQ SUB bound with {@code bindToRandomPort}) and
     * {@link #bridge bridges} this stream to it.
     *
     * <p>Why the router-side ZMQ socket binds rather than connects: JeroMQ 0.6.0's poller can lose the
     * registration of a freshly connected socket when its connect completes in the same poller round as the
     * hand-off to the socket's engine (jeromq pull request 1022; {@code JeroMqConnectHandOffTest} shows the
     * mechanism). The connection is then up but JeroMQ never sends its greeting, so a bridge that accepted it
     * relays nothing, and JeroMQ only reconnects when its 30 s handshake timer fires. It hit about one fresh
     * connection in ten in a cold test JVM. A bound socket takes JeroMQ's accept path, which registers a new
     * channel and cannot lose it.
     *
     * @param port the port on 127.0.0.1 the peer listens on
     * @return the bridged socket (close it to end the bridge)
     * @throws IOException if the dial fails
     */
    public Socket bridgeTo(int port) throws IOException {
        Socket socket = new Socket("127.0.0.1", port);
        bridge(socket);
        return socket;
    }

    /**
     * Bytes a {@link #bridge} has written toward the broker (flushed).
     *
     * @return bytes
     */
    public long bridgedToBroker() {
        return bridgedToBroker.get();
    }

    /**
     * Bytes a {@link #bridge} has read from the broker and written to its socket.
     *
     * @return bytes
     */
    public long bridgedFromBroker() {
        return bridgedFromBroker.get();
    }

    /**
     * Ends the response body (END_STREAM): the broker half-closes the publisher socket. The
     * request body stays readable until the broker ends it.
     */
    public void end() {
        if (responseDone.getCount() == 0) {
            return;
        }
        try {
            toBroker.close();
        } catch (IOException | RuntimeException ignored) {
            // already gone
        }
        responseDone.countDown();
    }

    /**
     * Resets the stream from the router side (RST_STREAM CANCEL).
     */
    public void reset() {
        try {
            resetter.run();
        } finally {
            responseDone.countDown();
            requestDone.countDown();
        }
    }

    void release() {
        responseDone.countDown();
        requestDone.countDown();
    }

    void awaitDone(Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        responseDone.await(max.toMillis(), TimeUnit.MILLISECONDS);
        requestDone.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /** Notices the end of the broker's request body, however the reader got there. */
    private static final class EndAwareInputStream extends java.io.FilterInputStream {
        private final CountDownLatch ended;

        EndAwareInputStream(InputStream in, CountDownLatch ended) {
            super(in);
            this.ended = ended;
        }

        @Override
        public int read() throws IOException {
            try {
                int b = super.read();
                if (b < 0) {
                    ended.countDown();
                }
                return b;
            } catch (IOException | RuntimeException e) {
                ended.countDown();
                throw e;
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                int n = super.read(b, off, len);
                if (n < 0) {
                    ended.countDown();
                }
                return n;
            } catch (IOException | RuntimeException e) {
                ended.countDown();
                throw e;
            }
        }
    }
}
