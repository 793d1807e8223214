package io.continuum.broker.testing.router;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

import io.continuum.broker.testing.net.AcceptLoop;
import io.continuum.broker.testing.pki.ServerIdentity;

/**
 * A bare HTTP/2 server over TLS (ALPN h2) that answers only SETTINGS and PING by itself and shows the test every
 * other frame raw: for wire-level assertions no full server stack allows (HPACK representations, exact
 * flow-control accounting, GOAWAY and RST_STREAM with any code, a peer that stops answering PINGs).
 */
public final class RawH2Peer implements AutoCloseable {
    /**
     * One frame as received.
     */
    public record Frame(int type, int flags, int streamId, byte[] payload) {
        /** DATA. */
        public static final int DATA = 0x0;
        /** HEADERS. */
        public static final int HEADERS = 0x1;
        /** RST_STREAM. */
        public static final int RST_STREAM = 0x3;
        /** WINDOW_UPDATE. */
        public static final int WINDOW_UPDATE = 0x8;
        /** GOAWAY. */
        public static final int GOAWAY = 0x7;

        /** @return whether END_STREAM is set (DATA, HEADERS) */
        public boolean endStream() {
            return (flags & 0x1) != 0;
        }
    }

    private final SSLServerSocket listener;
    private final Map<Integer, Long> settings;
    private final String[] tlsProtocols;
    private final BlockingQueue<Connection> connections = new LinkedBlockingQueue<>();
    private final AcceptLoop acceptor;

    private RawH2Peer(ServerIdentity identity, Map<Integer, Long> settings, String[] tlsProtocols) throws IOException {
        this.settings = settings;
        this.tlsProtocols = tlsProtocols;
        this.listener = (SSLServerSocket) identity.serverContext().getServerSocketFactory()
                .createServerSocket(0, 50, InetAddress.getLoopbackAddress());
        SSLParameters parameters = listener.getSSLParameters();
        parameters.setApplicationProtocols(new String[] {"h2"});
        listener.setSSLParameters(parameters);
        this.acceptor = AcceptLoop.start("raw-h2-accept", listener, socket ->
                Thread.ofVirtual().name("raw-h2-conn").start(() -> {
                    try {
                        Connection c = new Connection((SSLSocket) socket);
                        connections.add(c);
                        c.readLoop();
                    } catch (IOException e) {
                        // connection ended
                    }
                }));
    }

    /**
     * @param identity server certificate
     * @param settings SETTINGS the peer sends first (identifier to value), e.g. {@code 3 -> 100}
     * @return a started peer
     * @throws IOException when the socket cannot be opened
     */
    public static RawH2Peer start(ServerIdentity identity, Map<Integer, Long> settings) throws IOException {
        return new RawH2Peer(identity, settings, null);
    }

    /**
     * @param identity     server certificate
     * @param settings     SETTINGS the peer sends first
     * @param tlsProtocols the only TLS versions the peer accepts, e.g. {@code TLSv1.2}
     * @return a started peer
     * @throws IOException when the socket cannot be opened
     */
    public static RawH2Peer start(ServerIdentity identity, Map<Integer, Long> settings, String... tlsProtocols)
            throws IOException {
        return new RawH2Peer(identity, settings, tlsProtocols);
    }

    /** @return {@code https://localhost:<port>} */
    public URI busUrl() {
        return URI.create("https://localhost:" + listener.getLocalPort());
    }

    /**
     * @param timeout how long to wait
     * @return the next client connection, preface and SETTINGS already exchanged
     */
    public Connection accept(Duration timeout) throws InterruptedException, TimeoutException {
        Connection c = connections.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (c == null) {
            throw new TimeoutException("no connection");
        }
        return c;
    }

    /** Stops accepting; returns once the port refuses connections. Open connections stay until closed. */
    @Override
    public void close() {
        acceptor.close();
    }

    /** One accepted client connection. */
    public final class Connection implements AutoCloseable {
        private final SSLSocket socket;
        private final DataInputStream in;
        private final OutputStream out;
        private final BlockingQueue<Frame> frames = new LinkedBlockingQueue<>();
        private final Map<Integer, AtomicLong> dataBytes = new ConcurrentHashMap<>();
        /** WINDOW_UPDATE increments the client granted, per stream id (0: the connection); guarded by itself. */
        private final Map<Integer, Long> granted = new java.util.HashMap<>();
        private volatile boolean answerPings = true;
        /** Guarded by itself: while set, the read loop takes no bytes off the socket. */
        private final boolean[] readingStopped = {false};

        Connection(SSLSocket socket) throws IOException {
            this.socket = socket;
            if (tlsProtocols != null && tlsProtocols.length > 0) {
                socket.setEnabledProtocols(tlsProtocols);
            }
            socket.startHandshake();
            this.in = new DataInputStream(socket.getInputStream());
            this.out = socket.getOutputStream();
            byte[] preface = new byte[24];
            in.readFully(preface);
            byte[] payload = new byte[settings.size() * 6];
            int i = 0;
            for (Map.Entry<Integer, Long> e : settings.entrySet()) {
                payload[i] = (byte) (e.getKey() >>> 8);
                payload[i + 1] = (byte) (int) e.getKey();
                long v = e.getValue();
                payload[i + 2] = (byte) (v >>> 24);
                payload[i + 3] = (byte) (v >>> 16);
                payload[i + 4] = (byte) (v >>> 8);
                payload[i + 5] = (byte) v;
                i += 6;
            }
            send(0x4, 0, 0, payload);
        }

        /**
         * @param on whether PINGs are acknowledged (off: a peer that is silently gone)
         */
        public void answerPings(boolean on) {
            answerPings = on;
        }

        /**
         * Stops taking bytes off the socket (after the frame being read, if any), while the test may still send:
         * the peer's TCP receive window fills, then the client's socket writes block. Lasts until {@link #close}.
         */
        public void stopReading() {
            synchronized (readingStopped) {
                readingStopped[0] = true;
            }
        }

        /**
         * @param match which frame
         * @param timeout how long to wait
         * @return the next matching frame (others are discarded)
         */
        public Frame next(Predicate<Frame> match, Duration timeout) throws InterruptedException, TimeoutException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                Frame f = frames.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                if (f == null) {
                    throw new TimeoutException("no matching frame");
                }
                if (match.test(f)) {
                    return f;
                }
            }
        }

        /**
         * Waits until the client's WINDOW_UPDATEs for {@code streamId} (0: the connection) add up to at least
         * {@code total}: what a sender that respects the client's receive window waits for.
         */
        public void awaitGranted(int streamId, long total, Duration timeout) throws InterruptedException,
                TimeoutException {
            long deadline = System.nanoTime() + timeout.toNanos();
            synchronized (granted) {
                while (granted.getOrDefault(streamId, 0L) < total) {
                    if (socket.isClosed()) {
                        throw new TimeoutException("the connection closed: the client grants no more window");
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new TimeoutException("the client granted no window on stream " + streamId);
                    }
                    TimeUnit.NANOSECONDS.timedWait(granted, left);
                }
            }
        }

        /**
         * @return DATA payload bytes received on it so far
         */
        public long dataReceived(int streamId) {
            AtomicLong n = dataBytes.get(streamId);
            return n == null ? 0 : n.get();
        }

        /** Sends HEADERS {@code :status 200} (HPACK static index 8). */
        public void sendStatus200(int streamId, boolean endStream) throws IOException {
            send(0x1, 0x4 | (endStream ? 0x1 : 0), streamId, new byte[] {(byte) 0x88});
        }

        /** Sends DATA. */
        public void sendData(int streamId, byte[] data, boolean endStream) throws IOException {
            send(0x0, endStream ? 0x1 : 0, streamId, data);
        }

        /** Sends RST_STREAM. */
        public void sendReset(int streamId, int errorCode) throws IOException {
            send(0x3, 0, streamId, int32(errorCode));
        }

        /** Sends WINDOW_UPDATE. */
        public void sendWindowUpdate(int streamId, int increment) throws IOException {
            send(0x8, 0, streamId, int32(increment));
        }

        /** Sends GOAWAY. */
        public void sendGoAway(int lastStreamId, int errorCode) throws IOException {
            byte[] p = new byte[8];
            System.arraycopy(int32(lastStreamId), 0, p, 0, 4);
            System.arraycopy(int32(errorCode), 0, p, 4, 4);
            send(0x7, 0, 0, p);
        }

        /** Sends a raw frame. */
        public void send(int type, int flags, int streamId, byte[] payload) throws IOException {
            sendFrames(new Frame(type, flags, streamId, payload));
        }

        /** Sends raw frames back to back in one write (so, on loopback, usually in one read of the broker's). */
        public synchronized void sendFrames(Frame... frames) throws IOException {
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            for (Frame f : frames) {
                byte[] payload = f.payload();
                all.write(payload.length >>> 16);
                all.write(payload.length >>> 8);
                all.write(payload.length);
                all.write(f.type());
                all.write(f.flags());
                all.writeBytes(int32(f.streamId()));
                all.writeBytes(payload);
            }
            out.write(all.toByteArray());
            out.flush();
        }

        @Override
        public void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
            synchronized (granted) {
                granted.notifyAll(); // a sender waiting for window learns the connection is gone
            }
            synchronized (readingStopped) {
                readingStopped.notifyAll();
            }
        }

        private void awaitReading() throws IOException {
            synchronized (readingStopped) {
                while (readingStopped[0]) {
                    if (socket.isClosed()) {
                        throw new IOException("closed while not reading");
                    }
                    try {
                        readingStopped.wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IOException("interrupted", e);
                    }
                }
            }
        }

        void readLoop() throws IOException {
            try {
                while (true) {
                    awaitReading();
                    byte[] header = new byte[9];
                    in.readFully(header);
                    int length = ((header[0] & 0xFF) << 16) | ((header[1] & 0xFF) << 8) | (header[2] & 0xFF);
                    int type = header[3] & 0xFF;
                    int flags = header[4] & 0xFF;
                    int streamId = (((header[5] & 0x7F) << 24) | ((header[6] & 0xFF) << 16)
                            | ((header[7] & 0xFF) << 8) | (header[8] & 0xFF));
                    byte[] payload = new byte[length];
                    in.readFully(payload);
                    if (type == 0x4 && (flags & 0x1) == 0) {
                        send(0x4, 0x1, 0, new byte[0]);
                        continue;
                    }
                    if (type == 0x6 && (flags & 0x1) == 0) {
                        if (answerPings) {
                            send(0x6, 0x1, 0, payload);
                        }
                        continue;
                    }
                    if (type == 0x0) {
                        dataBytes.computeIfAbsent(streamId, k -> new AtomicLong()).addAndGet(length);
                    }
                    if (type == 0x8 && length == 4) {
                        long increment = (((payload[0] & 0x7FL) << 24) | ((payload[1] & 0xFFL) << 16)
                                | ((payload[2] & 0xFFL) << 8) | (payload[3] & 0xFFL));
                        synchronized (granted) {
                            granted.merge(streamId, increment, Long::sum);
                            granted.notifyAll();
                        }
                    }
                    frames.add(new Frame(type, flags, streamId, payload));
                }
            } finally {
                close();
            }
        }
    }

    /**
     * A header block of one literal field with incremental indexing and a new name (RFC 7541 section 6.2.1,
     * no Huffman): it adds an entry to the receiver's HPACK dynamic table, which is what a test needs to check
     * that a decoder stays in step when the block arrives on a stream it already reset.
     */
    public static byte[] hpackLiteralWithIndexing(String name, String value) {
        byte[] n = name.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        byte[] v = value.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        if (n.length > 126 || v.length > 126) {
            throw new IllegalArgumentException("name and value must fit a 7-bit length prefix");
        }
        byte[] block = new byte[3 + n.length + v.length];
        block[0] = 0x40;
        block[1] = (byte) n.length;
        System.arraycopy(n, 0, block, 2, n.length);
        block[2 + n.length] = (byte) v.length;
        System.arraycopy(v, 0, block, 3 + n.length, v.length);
        return block;
    }

    private static byte[] int32(int v) {
        return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }
}
