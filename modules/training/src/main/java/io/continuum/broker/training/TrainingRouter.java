package io.continuum.broker.training;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.FrameHandler;
import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.h2.Http2;
import io.continuum.broker.h2.Http2Error;
import io.continuum.broker.h2.Http2Reader;
import io.continuum.broker.h2.Http2Writer;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.FrameDecoder;
import io.continuum.broker.protocol.ProtocolException;
import io.continuum.broker.protocol.Target;

/**
 * The router of a training run: one broker connection at a time (TLS, ALPN h2), read by one platform thread with
 * the project's frame codec, answering as bus-protocol-v1 asks: {@code 200} and {@code welcome} on the session,
 * {@code subscribe} for each training stream, {@code 200} on each data stream, heartbeats every
 * {@link #HEARTBEAT}, every DATA byte granted back at once. It reads what the broker relays and counts it; an
 * {@link Load#ECHO} stream also sends, one message in flight. Loopback only, and only as long as the training
 * run: not a router anyone should deploy.
 */
final class TrainingRouter implements AutoCloseable {
    static final String SESSION_PATH = "/bus/v1/session";
    static final String STREAM_PATH = "/bus/v1/streams/";
    private static final Duration HEARTBEAT = Duration.ofSeconds(3);
    private static final int STREAM_WINDOW = 1 << 20;
    private static final int CONNECTION_WINDOW = 1 << 30;
    private static final HeaderField STATUS_200 = new HeaderField(":status", "200");
    private static final HeaderField BUS_CONTENT_TYPE = new HeaderField("content-type", "application/x-continuum-bus");

    private final SSLServerSocket listener;
    private final Map<Long, Stream> byBusId = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> endedByCode = new ConcurrentHashMap<>();
    private final CountDownLatch welcomed = new CountDownLatch(1);
    private final AtomicLong sessions = new AtomicLong();
    private volatile Connection connection;

    TrainingRouter(SSLContext tls) throws IOException {
        listener = (SSLServerSocket) tls.getServerSocketFactory().createServerSocket(0, 4, InetAddress.getLoopbackAddress());
        SSLParameters p = listener.getSSLParameters();
        p.setApplicationProtocols(new String[] {"h2"});
        listener.setSSLParameters(p);
        Thread.ofPlatform().daemon().name("training-router-accept").start(this::acceptLoop);
        Thread.ofVirtual().name("training-router-heartbeat").start(this::heartbeats);
    }

    /** @return the {@code bus_url} the broker dials */
    String url() {
        return "https://localhost:" + listener.getLocalPort();
    }

    /** Waits for the broker's first session to be welcomed. */
    boolean awaitSession(Duration timeout) throws InterruptedException {
        return welcomed.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Sends {@code subscribe} for bus stream {@code busId}; the returned stream counts what it carries. */
    Stream subscribe(long busId, Target.ZmqTcp target, Load load) throws IOException {
        return subscribe(busId, target, load, System.nanoTime());
    }

    /** As {@link #subscribe(long, Target.ZmqTcp, Load)}; round trips are timed from {@code epochNanos}. */
    Stream subscribe(long busId, Target.ZmqTcp target, Load load, long epochNanos) throws IOException {
        Stream s = new Stream(busId, load, epochNanos);
        byBusId.put(busId, s);
        Connection c = connection;
        if (c == null) {
            throw new IOException("no broker session");
        }
        c.sendSession(FrameCodec.encode(new Frame.Subscribe(busId, target)));
        return s;
    }

    /** @return {@code stream_closed} and {@code stream_refused} frames so far, by code */
    Map<String, Long> endedByCode() {
        Map<String, Long> copy = new java.util.TreeMap<>();
        endedByCode.forEach((k, v) -> copy.put(k, v.get()));
        return copy;
    }

    /** @return how many sessions the broker opened */
    long sessions() {
        return sessions.get();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            SSLSocket s;
            try {
                s = (SSLSocket) listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            Thread.ofPlatform().daemon().name("training-router-read").start(() -> {
                try (s) {
                    Connection c = new Connection(s);
                    connection = c;
                    c.readLoop();
                } catch (IOException | UncheckedIOException | Http2Error e) {
                    // the broker closed the connection (its drain), or broke a rule: the run's checks tell
                }
            });
        }
    }

    private void heartbeats() {
        byte[] heartbeat = FrameCodec.encode(new Frame.Heartbeat());
        while (!listener.isClosed()) {
            try {
                Thread.sleep(HEARTBEAT);
                Connection c = connection;
                if (c != null && c.welcomed) {
                    c.sendSession(heartbeat);
                }
            } catch (InterruptedException e) {
                return;
            } catch (IOException e) {
                // that connection is gone; the next one gets its heartbeats
            }
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        Connection c = connection;
        if (c != null) {
            c.socket.close();
        }
    }

    /** One training stream as the router sees it. */
    static final class Stream {
        final long busId;
        final Load load;
        final AtomicLong bytes = new AtomicLong();
        final CountDownLatch opened = new CountDownLatch(1);
        final Semaphore echoed = new Semaphore(0);
        final RoundTrips roundTrips = new RoundTrips();
        volatile int h2Stream;
        volatile boolean ended;
        int unacked;

        final long epochNanos;

        Stream(long busId, Load load, long epochNanos) {
            this.busId = busId;
            this.load = load;
            this.epochNanos = epochNanos;
        }

        /** @return bytes the broker relayed from the publisher */
        long bytes() {
            return bytes.get();
        }
    }

    /** The broker's connection. */
    private final class Connection implements FrameHandler {
        final SSLSocket socket;
        final Http2Reader reader;
        final Http2Writer writer;
        final FrameDecoder<Frame> decoder = FrameDecoder.forClientFrames();
        final Map<Integer, Stream> byH2Stream = new ConcurrentHashMap<>();
        volatile int sessionStream;
        volatile boolean welcomed;
        long connectionUnacked;

        Connection(SSLSocket socket) throws IOException, Http2Error {
            this.socket = socket;
            socket.setTcpNoDelay(true);
            socket.startHandshake();
            Http2Reader.readClientPreface(socket.getInputStream());
            reader = new Http2Reader(socket.getInputStream(), this);
            writer = new Http2Writer(socket.getOutputStream());
            Map<Integer, Long> settings = new LinkedHashMap<>();
            settings.put(Http2.SETTINGS_INITIAL_WINDOW_SIZE, (long) STREAM_WINDOW);
            settings.put(Http2.SETTINGS_MAX_CONCURRENT_STREAMS, 1_024L);
            writer.settings(settings);
            writer.windowUpdate(0, CONNECTION_WINDOW - 65_535);
            writer.flush();
        }

        void readLoop() throws IOException, Http2Error {
            while (reader.nextFrame()) {
                // every frame goes to this connection's handler methods
            }
        }

        void sendSession(byte[] busFrame) throws IOException {
            writer.data(sessionStream, false, busFrame, 0, busFrame.length);
            writer.flush();
        }

        @Override
        public void headers(int stream, boolean endStream, List<HeaderField> fields) {
            String path = fields.stream().filter(f -> f.name().equals(":path")).map(HeaderField::value)
                    .findFirst().orElse("");
            try {
                if (path.equals(SESSION_PATH)) {
                    sessionStream = stream;
                    writer.headers(stream, false, List.of(STATUS_200, BUS_CONTENT_TYPE));
                } else if (path.startsWith(STREAM_PATH) && byBusId.get(busId(path)) instanceof Stream s) {
                    s.h2Stream = stream;
                    byH2Stream.put(stream, s);
                    writer.headers(stream, false, List.of(STATUS_200));
                    if (s.load == Load.ECHO) {
                        Thread.ofVirtual().name("training-router-echo-" + s.busId).start(() -> echo(s));
                    }
                    s.opened.countDown();
                } else {
                    writer.rstStream(stream, ErrorCode.REFUSED_STREAM.code());
                }
                writer.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private static long busId(String path) {
            try {
                return Long.parseLong(path.substring(STREAM_PATH.length()));
            } catch (NumberFormatException e) {
                return -1;
            }
        }

        /** One 200-byte message at a time, up to the publisher and back, until the stream or the connection ends. */
        private void echo(Stream s) {
            byte[] message = new byte[Load.ECHO.bytes()];
            try {
                while (!s.ended) {
                    long sent = System.nanoTime();
                    writer.data(s.h2Stream, false, message, 0, message.length);
                    writer.flush();
                    if (!s.echoed.tryAcquire(message.length, 30, TimeUnit.SECONDS)) {
                        return; // nothing came back: the run's check of this stream's bytes says so
                    }
                    if (!s.ended) {
                        s.roundTrips.add(sent - s.epochNanos, System.nanoTime() - sent);
                    }
                }
            } catch (IOException | InterruptedException e) {
                // the connection ended
            }
        }

        @Override
        public void data(int stream, boolean endStream, ByteBuffer data, int flowControlled) {
            try {
                if (stream == sessionStream) {
                    decoder.decode(data, this::busFrame);
                    grant(null, flowControlled);
                    return;
                }
                Stream s = byH2Stream.get(stream);
                if (s != null) {
                    s.bytes.addAndGet(data.remaining());
                    if (s.load == Load.ECHO) {
                        s.echoed.release(data.remaining());
                    }
                    if (endStream) {
                        s.ended = true;
                    }
                }
                grant(s, flowControlled);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (ProtocolException e) {
                throw new UncheckedIOException(new IOException("the broker sent a malformed bus frame", e));
            }
        }

        private void busFrame(Frame f) {
            switch (f) {
                case Frame.Hello h -> {
                    try {
                        sendSession(FrameCodec.encode(new Frame.Welcome(1, "training-" + sessions.incrementAndGet(),
                                OptionalLong.of(HEARTBEAT.toMillis()), OptionalLong.empty(), OptionalLong.empty(),
                                OptionalLong.empty(), OptionalLong.empty())));
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                    welcomed = true;
                    TrainingRouter.this.welcomed.countDown();
                }
                case Frame.StreamClosed c -> ended(c.streamId(), c.code());
                case Frame.StreamRefused r -> ended(r.streamId(), r.code());
                default -> {
                    // heartbeat, stream_opened, draining
                }
            }
        }

        private void ended(long busId, Code code) {
            endedByCode.computeIfAbsent(code.wire(), k -> new AtomicLong()).incrementAndGet();
            Stream s = byBusId.get(busId);
            if (s != null) {
                s.ended = true;
                s.opened.countDown();
                s.echoed.release(Load.ECHO.bytes()); // its echo loop sees the end
            }
        }

        private void grant(Stream s, int length) throws IOException {
            boolean any = false;
            if (s != null && length > 0) {
                s.unacked += length;
                if (s.unacked >= STREAM_WINDOW / 4) {
                    writer.windowUpdate(s.h2Stream, s.unacked);
                    s.unacked = 0;
                    any = true;
                }
            }
            connectionUnacked += length;
            if (connectionUnacked >= CONNECTION_WINDOW / 4) {
                writer.windowUpdate(0, (int) connectionUnacked);
                connectionUnacked = 0;
                any = true;
            }
            if (any) {
                writer.flush();
            }
        }

        @Override
        public void rstStream(int stream, int errorCode) {
            Stream s = byH2Stream.remove(stream);
            if (s != null) {
                s.ended = true;
                s.echoed.release(Load.ECHO.bytes());
            }
        }

        @Override
        public void settings(boolean ack, Map<Integer, Long> values) {
            if (!ack) {
                writer.applyPeerSettings(values);
                writer.settingsAck();
                flushQuietly();
            }
        }

        @Override
        public void ping(boolean ack, long payload) {
            if (!ack) {
                writer.ping(true, payload);
                flushQuietly();
            }
        }

        private void flushQuietly() {
            try {
                writer.flush();
            } catch (IOException e) {
                try {
                    socket.close(); // the read loop ends at its next read
                } catch (IOException ignored) {
                    // closing
                }
            }
        }
    }
}
