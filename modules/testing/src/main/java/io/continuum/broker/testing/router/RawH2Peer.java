package io.continuum.broker.testing.router;

import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;

import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

import io.continuum.broker.h2.FrameHandler;
import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.h2.Http2;
import io.continuum.broker.h2.Http2Error;
import io.continuum.broker.h2.Http2Reader;
import io.continuum.broker.h2.Http2Writer;
import io.continuum.broker.testing.net.AcceptLoop;
import io.continuum.broker.testing.pki.ServerIdentity;

/**
 * A bare HTTP/2 server over TLS (ALPN h2) that answers only SETTINGS and PING by itself and shows the test every
 * other frame: for wire-level assertions no full server stack allows (how a header was encoded, exact
 * flow-control accounting, GOAWAY and RST_STREAM with any code, a peer that stops answering PINGs or reading).
 * It reads and writes with the project's frame codec ({@code io.continuum.broker.h2}), so the frame rules and
 * HPACK are the codec's, tested once.
 */
public final class RawH2Peer implements AutoCloseable {
    private static final int END_STREAM = Http2.FLAG_END_STREAM;
    private static final int END_HEADERS = Http2.FLAG_END_HEADERS;
    /**
     * One frame as received: header blocks whole and decoded ({@link #fields}), DATA without padding; the payload
     * of RST_STREAM, WINDOW_UPDATE and GOAWAY as on the wire.
     */
    public record Frame(int type, int flags, int streamId, byte[] payload, List<HeaderField> fields) {
        /** DATA. */
        public static final int DATA = Http2.TYPE_DATA;
        /** HEADERS (with its CONTINUATIONs). */
        public static final int HEADERS = Http2.TYPE_HEADERS;
        /** RST_STREAM. */
        public static final int RST_STREAM = Http2.TYPE_RST_STREAM;
        /** PING (only ACKs reach a test: the peer answers the client's PINGs itself). */
        public static final int PING = Http2.TYPE_PING;
        /** GOAWAY. */
        public static final int GOAWAY = Http2.TYPE_GOAWAY;
        /** WINDOW_UPDATE. */
        public static final int WINDOW_UPDATE = Http2.TYPE_WINDOW_UPDATE;
        private static final byte[] NONE = new byte[0];

        /** @return whether END_STREAM is set (DATA, HEADERS) */
        public boolean endStream() {
            return (flags & Http2.FLAG_END_STREAM) != 0;
        }

        /** @return the value of the first field with this name, or null */
        public String field(String name) {
            return fields.stream().filter(f -> f.name().equals(name)).map(HeaderField::value).findFirst()
                    .orElse(null);
        }
    }

    private final SSLServerSocket listener;
    private final Map<Integer, Long> settings;
    private final String[] tlsProtocols;
    /** Frames written before the SETTINGS of each connection (a broken preface), or null. */
    private final Consumer<Http2Writer> beforeSettings;
    private final BlockingQueue<Connection> connections = new LinkedBlockingQueue<>();
    private final AcceptLoop acceptor;

    private RawH2Peer(ServerIdentity identity, Map<Integer, Long> settings, String[] tlsProtocols,
                      Consumer<Http2Writer> beforeSettings) throws IOException {
        this.settings = settings;
        this.tlsProtocols = tlsProtocols;
        this.beforeSettings = beforeSettings;
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
                    } catch (IOException | Http2Error e) {
                        // connection ended, or the client broke a frame rule: the connection is closed
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
        return new RawH2Peer(identity, settings, null, null);
    }

    /**
     * A peer whose connection preface is broken (RFC 9113 section 3.4): on each connection it writes what
     * {@code first} writes before its SETTINGS.
     *
     * @param identity server certificate
     * @param first    the frames that go before the SETTINGS
     * @return a started peer
     * @throws IOException when the socket cannot be opened
     */
    public static RawH2Peer startWritingFirst(ServerIdentity identity, Consumer<Http2Writer> first)
            throws IOException {
        return new RawH2Peer(identity, Map.of(), null, first);
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
        return new RawH2Peer(identity, settings, tlsProtocols, null);
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
    public final class Connection implements AutoCloseable, FrameHandler {
        private final SSLSocket socket;
        private final Http2Reader reader;
        private final Http2Writer writer;
        private final BlockingQueue<Frame> frames = new LinkedBlockingQueue<>();
        private final Map<Integer, AtomicLong> dataBytes = new ConcurrentHashMap<>();
        /** WINDOW_UPDATE increments the client granted, per stream id (0: the connection); guarded by itself. */
        private final Map<Integer, Long> granted = new HashMap<>();
        private volatile boolean answerPings = true;
        /** Set by {@link #indexEveryField}; guarded by the writer's monitor, as {@link #headersSent} is. */
        private IndexingHpackEncoder indexing;
        private boolean headersSent;
        /** Guarded by itself: while set, the read loop takes no bytes off the socket. */
        private final boolean[] readingStopped = {false};
        private final CountDownLatch readingEnded = new CountDownLatch(1);

        Connection(SSLSocket socket) throws IOException {
            this.socket = socket;
            if (tlsProtocols != null && tlsProtocols.length > 0) {
                socket.setEnabledProtocols(tlsProtocols);
            }
            socket.startHandshake();
            this.writer = new Http2Writer(socket.getOutputStream());
            try {
                Http2Reader.readClientPreface(socket.getInputStream());
            } catch (Http2Error e) {
                throw new IOException(e);
            }
            this.reader = new Http2Reader(socket.getInputStream(), this);
            reader.expectSettingsFirst();
            Long maxFrame = settings.get(Http2.SETTINGS_MAX_FRAME_SIZE);
            if (maxFrame != null) {
                reader.maxFrameSize(Math.toIntExact(maxFrame)); // from the start: no ACK is awaited
            }
            Long tableSize = settings.get(Http2.SETTINGS_HEADER_TABLE_SIZE);
            if (tableSize != null) {
                reader.headerTableSize(tableSize); // likewise: the client's first header block must announce it
            }
            if (beforeSettings != null) {
                beforeSettings.accept(writer);
            }
            writer.settings(settings);
            writer.flush();
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
         * Waits until the connection has ended (the client closed it, or a frame broke a rule) and every frame it
         * sent has been read.
         *
         * @return the frames {@link #next} has not taken, in wire order
         */
        public List<Frame> remainingFramesOnceEnded(Duration timeout) throws InterruptedException, TimeoutException {
            if (!readingEnded.await(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new TimeoutException("the connection did not end");
            }
            List<Frame> rest = new ArrayList<>();
            frames.drainTo(rest);
            return rest;
        }

        /**
         * @return DATA payload bytes received on it so far
         */
        public long dataReceived(int streamId) {
            AtomicLong n = dataBytes.get(streamId);
            return n == null ? 0 : n.get();
        }

        /** Sends HEADERS {@code :status 200}. */
        public void sendStatus200(int streamId, boolean endStream) throws IOException {
            sendHeaders(streamId, endStream, new HeaderField(":status", "200"));
        }

        /** Sends a header block (HEADERS, and CONTINUATIONs if it is larger than the client's frames). */
        public void sendHeaders(int streamId, boolean endStream, HeaderField... fields) throws IOException {
            synchronized (writer) {
                if (indexing != null) {
                    byte[] block = indexing.encode(List.of(fields));
                    writer.frame(Frame.HEADERS, END_HEADERS | (endStream ? END_STREAM : 0), streamId, block);
                } else {
                    headersSent = true;
                    writer.headers(streamId, endStream, List.of(fields));
                }
            }
            writer.flush();
        }

        /**
         * From now on, header blocks are encoded as Python's {@code hpack} encodes them: every new field indexed, large
         * ones included (the project's own encoder never adds an entry larger than the table, and Netty's sends such
         * fields without indexing). Only before the first HEADERS: the two encoders' tables would disagree.
         */
        public void indexEveryField() {
            synchronized (writer) {
                if (headersSent) {
                    throw new IllegalStateException("a header block was already sent with the codec's encoder");
                }
                if (indexing == null) {
                    indexing = new IndexingHpackEncoder();
                }
            }
        }

        /**
         * A dynamic table size update (RFC 7541 section 6.3) at the start of the next header block; only after
         * {@link #indexEveryField}.
         */
        public void sizeUpdateBeforeNextBlock(long size) {
            synchronized (writer) {
                if (indexing == null) {
                    throw new IllegalStateException("indexEveryField() first");
                }
                indexing.sizeUpdate(size);
            }
        }

        /** Sends DATA (several frames if it is larger than the client's frames). */
        public void sendData(int streamId, byte[] data, boolean endStream) throws IOException {
            sendTogether(w -> w.data(streamId, endStream, data, 0, data.length));
        }

        /** Sends RST_STREAM. */
        public void sendReset(int streamId, int errorCode) throws IOException {
            sendTogether(w -> w.rstStream(streamId, errorCode));
        }

        /** Sends WINDOW_UPDATE. */
        public void sendWindowUpdate(int streamId, int increment) throws IOException {
            sendTogether(w -> w.windowUpdate(streamId, increment));
        }

        /** Sends SETTINGS (identifier to value). */
        public void sendSettings(Map<Integer, Long> values) throws IOException {
            sendTogether(w -> w.settings(values));
        }

        /** Sends GOAWAY. */
        public void sendGoAway(int lastStreamId, int errorCode) throws IOException {
            sendTogether(w -> w.goAway(lastStreamId, errorCode, new byte[0]));
        }

        /** Sends a frame exactly as given, unchecked (what a broken peer sends). */
        public void send(int type, int flags, int streamId, byte[] payload) throws IOException {
            sendTogether(w -> w.frame(type, flags, streamId, payload));
        }

        /**
         * Sends what {@code frames} writes in one socket write (so, on loopback, usually in one read of the
         * client's), e.g. HEADERS and DATA back to back.
         */
        public void sendTogether(Consumer<Http2Writer> frames) throws IOException {
            synchronized (writer) { // contiguous, whatever another thread sends meanwhile
                frames.accept(writer);
            }
            writer.flush();
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

        void readLoop() throws IOException, Http2Error {
            try {
                do {
                    awaitReading();
                } while (reader.nextFrame());
            } finally {
                close();
                readingEnded.countDown();
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

        // FrameHandler: the reader thread, in wire order

        @Override
        public void settings(boolean ack, Map<Integer, Long> values) {
            if (!ack) {
                writer.applyPeerSettings(values);
                reply(w -> w.settingsAck());
            }
        }

        @Override
        public void ping(boolean ack, long payload) {
            if (ack) { // the answer to a PING the test sent
                frames.add(new Frame(Frame.PING, Http2.FLAG_ACK, 0, ByteBuffer.allocate(8).putLong(payload).array(), List.of()));
            } else if (answerPings) {
                reply(w -> w.ping(true, payload));
            }
        }

        @Override
        public void data(int streamId, boolean endStream, ByteBuffer data, int flowControlled) {
            byte[] bytes = new byte[data.remaining()]; // the reader reuses its buffer
            data.get(bytes);
            dataBytes.computeIfAbsent(streamId, k -> new AtomicLong()).addAndGet(bytes.length);
            frames.add(new Frame(Frame.DATA, endStream ? END_STREAM : 0, streamId, bytes, List.of()));
        }

        @Override
        public void headers(int streamId, boolean endStream, List<HeaderField> fields) {
            frames.add(new Frame(Frame.HEADERS, END_HEADERS | (endStream ? END_STREAM : 0), streamId, Frame.NONE, fields));
        }

        @Override
        public void rstStream(int streamId, int errorCode) {
            frames.add(new Frame(Frame.RST_STREAM, 0, streamId, ByteBuffer.allocate(4).putInt(errorCode).array(),
                    List.of()));
        }

        @Override
        public void windowUpdate(int streamId, int increment) {
            synchronized (granted) {
                granted.merge(streamId, (long) increment, Long::sum);
                granted.notifyAll();
            }
            frames.add(new Frame(Frame.WINDOW_UPDATE, 0, streamId, ByteBuffer.allocate(4).putInt(increment).array(),
                    List.of()));
        }

        @Override
        public void goAway(int lastStreamId, int errorCode, byte[] debugData) {
            byte[] payload = ByteBuffer.allocate(8 + debugData.length).putInt(lastStreamId).putInt(errorCode)
                    .put(debugData).array();
            frames.add(new Frame(Frame.GOAWAY, 0, 0, payload, List.of()));
        }

        private void reply(Consumer<Http2Writer> frame) {
            try {
                sendTogether(frame);
            } catch (IOException e) {
                close(); // the read loop ends at its next read
            }
        }
    }
}
