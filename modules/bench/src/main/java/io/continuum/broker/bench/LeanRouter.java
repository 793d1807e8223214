package io.continuum.broker.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

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
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.FrameDecoder;
import io.continuum.broker.protocol.ProtocolException;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.ServerIdentity;

/**
 * A router that costs far less than the broker, so that a measurement of the broker's own CPU and latency is not
 * a measurement of the router (bench/isolate.py; docs/benchmarks.md, "Isolated measurement"). Not a test peer and
 * not a router anyone should deploy: it speaks just enough bus-protocol-v1 for one broker session on loopback.
 * <ul>
 *   <li>one TLS (ALPN h2) connection at a time, read by one platform thread with a reused buffer;</li>
 *   <li>a data stream's request DATA is written straight to its subscriber socket from that thread (no queue,
 *       no copy beyond the TLS record's), and its window is returned in 256 KiB steps;</li>
 *   <li>each subscriber socket accepted on a bridge port sends one {@code subscribe} to that port's publisher;
 *       the bytes the subscriber sends go back as response DATA from the socket's own virtual thread.</li>
 * </ul>
 * <p>
 * For the Dynamo-shaped load it can also be the subscriber itself ({@code sinks}): each stream's bytes are read as
 * ZMTP and every message is checked on the connection's thread ({@link ZmtpSubscriber}, {@link DynamoCheck}), with
 * no subscriber socket behind it. That load's 256 subscriber sockets cost the one core the router shares with the
 * publishers a socket write and a read per message, more than the broker's whole path; a real router consumes its
 * KV events itself.
 * <p>
 * Driven over stdin: {@code bridge <publisherPort>} answers {@code bridge <publisherPort> <listenPort>};
 * {@code sinks <seed> <publisherPort>...} subscribes to each port as publisher 0, 1, ... of that seed's load and
 * answers {@code sinks <count>}; {@code tally} answers
 * {@code tally <verified> <bad> <bytes> <ended> <joined> <opened>} for the last {@code sinks};
 * {@code stats} answers {@code stats <closed other than upstream_closed> <refused> <resets> <dataBytes>};
 * {@code closes} answers {@code closes <code>=<count>...}: the same stream_closed frames by code;
 * {@code quit} or EOF stops it.
 * Arg: a work directory, where it writes {@code ca.pem}, {@code cert.pem} and {@code key.pem} (stunnel's files).
 */
public final class LeanRouter {
    private static final int STREAM_WINDOW = Integer.getInteger("bench.leanStreamWindow", 1 << 20);
    private static final int CONNECTION_WINDOW = 1 << 30;
    private static final int MAX_FRAME = Integer.getInteger("bench.leanMaxFrame", 16_384);
    private static final HeaderField STATUS_200 = new HeaderField(":status", "200");

    private final SSLServerSocket listener;
    private final Map<Long, Downstream> byBusId = new ConcurrentHashMap<>();
    private final Map<Integer, Downstream> byH2Stream = new ConcurrentHashMap<>();
    private final AtomicLong nextBusId = new AtomicLong(1);
    private final AtomicLong closed = new AtomicLong();
    private final Map<String, AtomicLong> closedByCode = new ConcurrentHashMap<>(); // the same closes, by code
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong resets = new AtomicLong();
    private final AtomicLong dataBytes = new AtomicLong();
    private final AtomicLong sinksOpened = new AtomicLong();
    private volatile Conn conn;
    private volatile DynamoCheck sinkCheck; // the current "sinks" run's check
    private volatile CountDownLatch sessionUp = new CountDownLatch(1);

    private LeanRouter(ServerIdentity identity) throws IOException {
        listener = (SSLServerSocket) identity.serverContext().getServerSocketFactory()
                .createServerSocket(0, 16, InetAddress.getLoopbackAddress());
        SSLParameters p = listener.getSSLParameters();
        p.setApplicationProtocols(new String[] {"h2"});
        listener.setSSLParameters(p);
    }

    /**
     * Runs the router until told to quit.
     *
     * @param args work directory
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        Path work = Path.of(args[0]);
        EphemeralPki pki = EphemeralPki.create();
        ServerIdentity server = pki.localhostServer();
        Files.write(work.resolve("ca.pem"), pki.caPem());
        Files.write(work.resolve("cert.pem"), server.certificatePem());
        Files.writeString(work.resolve("key.pem"), "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(server.key().getEncoded())
                + "\n-----END PRIVATE KEY-----\n");
        LeanRouter r = new LeanRouter(server);
        Thread.ofPlatform().daemon().name("lean-accept").start(r::acceptLoop);
        Thread.ofPlatform().daemon().name("lean-heartbeat").start(r::heartbeats);
        System.out.println("url https://localhost:" + r.listener.getLocalPort());
        System.out.flush();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null && !line.equals("quit")) {
                String[] w = line.trim().split("\\s+");
                String answer = switch (w[0]) {
                    case "bridge" -> "bridge " + w[1] + " " + r.bridge(Integer.parseInt(w[1]));
                    case "stats" -> "stats " + r.closed.get() + " " + r.refused.get() + " " + r.resets.get() + " "
                            + r.dataBytes.get();
                    case "sinks" -> "sinks " + r.sinks(Long.parseLong(w[1]), java.util.Arrays.copyOfRange(w, 2, w.length));
                    case "tally" -> r.tally();
                    case "closes" -> "closes" + r.closedByCode.entrySet().stream()
                            .map(e -> " " + e.getKey() + "=" + e.getValue().get()).sorted()
                            .collect(java.util.stream.Collectors.joining());
                    default -> "unknown " + line;
                };
                System.out.println(answer);
                System.out.flush();
            }
        }
        System.exit(0);
    }

    private static void log(String s) {
        System.err.println("[lean-router " + Instant.now() + "] " + s);
    }

    private void acceptLoop() {
        while (true) {
            try {
                SSLSocket s = (SSLSocket) listener.accept();
                Thread.ofPlatform().name("lean-h2-read").start(() -> {
                    try {
                        Conn c = new Conn(s);
                        conn = c;
                        c.readLoop();
                    } catch (IOException | RuntimeException e) {
                        log("connection ended: " + e);
                    } finally {
                        sessionUp = new CountDownLatch(1);
                        try {
                            s.close();
                        } catch (IOException ignored) {
                            // closing
                        }
                    }
                });
            } catch (IOException e) {
                log("accept failed: " + e);
                return;
            }
        }
    }

    private void heartbeats() {
        byte[] hb = FrameCodec.encodeJson("{\"type\":\"heartbeat\"}");
        while (true) {
            try {
                Thread.sleep(3_000);
                Conn c = conn;
                if (c != null && c.welcomed) {
                    c.sendData(c.sessionStream, false, hb, 0, hb.length);
                }
            } catch (InterruptedException e) {
                return;
            } catch (IOException e) {
                // the connection is gone; the next one gets its heartbeats
            }
        }
    }

    /** A listener whose every accepted socket is bridged to a new subscription to {@code publisherPort}. */
    private int bridge(int publisherPort) throws IOException {
        ServerSocket ss = new ServerSocket(0, 512, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("lean-bridge-accept-" + publisherPort).start(() -> {
            while (true) {
                try {
                    Socket sub = ss.accept();
                    sub.setTcpNoDelay(true);
                    Thread.ofVirtual().name("lean-bridge").start(() -> new Bridge(sub).run(publisherPort));
                } catch (IOException e) {
                    return;
                }
            }
        });
        return ss.getLocalPort();
    }

    /** Starts one {@link Sink} per publisher port, publisher i at {@code ports[i]}; returns their count. */
    private int sinks(long seed, String[] ports) {
        DynamoCheck check = new DynamoCheck(seed, ports.length);
        sinkCheck = check;
        for (int i = 0; i < ports.length; i++) {
            Sink s = new Sink(i, check);
            int port = Integer.parseInt(ports[i]);
            Thread.ofVirtual().name("lean-sink").start(() -> s.run(port));
        }
        return ports.length;
    }

    private String tally() {
        DynamoCheck c = sinkCheck;
        if (c == null) {
            return "tally 0 0 0 0 0 0";
        }
        return "tally " + c.ok() + " " + c.bad() + " " + c.bytes() + " " + c.ended() + " " + c.joined() + " "
                + sinksOpened.get();
    }

    /** Where one data stream's request DATA (the publisher's bytes) goes. */
    private abstract sealed class Downstream permits Bridge, Sink {
        final CountDownLatch opened = new CountDownLatch(1);
        volatile int h2Stream;
        int unacked; // request bytes taken and not yet returned to the broker's window

        /**
         * The broker's data stream arrived (its HEADERS), on the connection's thread. By default the stream's own
         * thread answers it ({@link #respond}) once {@link #open} returns.
         */
        void opened(Conn c, int stream) throws IOException {
            h2Stream = stream;
            opened.countDown();
        }

        /**
         * Sends the subscribe for {@code publisherPort} and waits for the broker's data stream; the connection, or
         * null when the stream was refused or did not open.
         */
        Conn open(long busId, int publisherPort) throws IOException, InterruptedException {
            if (!sessionUp.await(30, TimeUnit.SECONDS)) {
                log("no session for stream " + busId);
                return null;
            }
            Conn c = conn;
            byte[] subscribe = FrameCodec.encodeJson("{\"type\":\"subscribe\",\"stream_id\":" + busId
                    + ",\"target\":{\"kind\":\"zmq_tcp\",\"namespace\":\"" + LoadHarness.NAMESPACE
                    + "\",\"host\":\"127.0.0.1\",\"port\":" + publisherPort + "}}");
            c.sendData(c.sessionStream, false, subscribe, 0, subscribe.length);
            if (!opened.await(30, TimeUnit.SECONDS) || h2Stream == 0) {
                log("stream " + busId + " not opened");
                return null;
            }
            return c;
        }

        /** The response's HEADERS: {@code :status 200}. */
        void respond(Conn c) throws IOException {
            c.sendStatus200(h2Stream, false);
        }

        /** The publisher's next bytes, on the connection's thread; false when this stream is of no further use. */
        abstract boolean receive(Conn c, byte[] p, int off, int len) throws IOException;

        /** The publisher's end (END_STREAM), on the connection's thread. */
        abstract void publisherEnded(Conn c) throws IOException;

        /** The stream was reset, refused or given up. */
        abstract void cut();
    }

    /** One subscriber socket and the data stream that feeds it. */
    private final class Bridge extends Downstream {
        final Socket sub;
        final OutputStream subOut;

        Bridge(Socket sub) {
            this.sub = sub;
            try {
                this.subOut = sub.getOutputStream();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        void run(int publisherPort) {
            long busId = nextBusId.getAndIncrement();
            byBusId.put(busId, this);
            try (sub) {
                Conn c = open(busId, publisherPort);
                if (c == null) {
                    return;
                }
                respond(c); // before the subscriber's bytes, which this thread sends
                InputStream in = sub.getInputStream();
                byte[] buf = new byte[8_192];
                int n;
                while ((n = in.read(buf)) > 0) {
                    c.sendData(h2Stream, false, buf, 0, n);
                }
                c.sendData(h2Stream, true, buf, 0, 0);
            } catch (IOException | InterruptedException e) {
                // the subscriber or the connection went away
            } finally {
                byBusId.remove(busId);
            }
        }

        @Override
        boolean receive(Conn c, byte[] p, int off, int len) {
            try {
                subOut.write(p, off, len);
                return true;
            } catch (IOException e) {
                return false;
            }
        }

        @Override
        void publisherEnded(Conn c) {
            try { // the subscriber's side closes too; its end of the stream follows from run()
                sub.shutdownOutput();
            } catch (IOException e) {
                closeQuietly(sub); // already gone
            }
        }

        @Override
        void cut() {
            closeQuietly(sub); // a ZMQ SUB reconnects and asks again
            opened.countDown();
        }
    }

    /** The subscriber of publisher {@code publisher} of a Dynamo-shaped load, checked in place. */
    private final class Sink extends Downstream {
        final ZmtpSubscriber zmtp;

        Sink(int publisher, DynamoCheck check) {
            zmtp = new ZmtpSubscriber(publisher, check);
        }

        /**
         * Answered at once, on the connection's thread: the publisher's greeting and READY follow the stream's
         * HEADERS closely, and the subscription they call for ({@link #receive}) must not precede our response's
         * HEADERS (DATA before a response's HEADERS is malformed, and Helidon's client ends the whole connection).
         */
        @Override
        void opened(Conn c, int stream) throws IOException {
            h2Stream = stream;
            respond(c);
            c.sendData(stream, false, ZmtpSubscriber.HELLO, 0, ZmtpSubscriber.HELLO.length);
            sinksOpened.incrementAndGet();
            opened.countDown();
        }

        void run(int publisherPort) {
            long busId = nextBusId.getAndIncrement();
            byBusId.put(busId, this);
            try {
                open(busId, publisherPort);
            } catch (IOException | InterruptedException e) {
                log("sink on " + publisherPort + " failed: " + e);
            } finally {
                byBusId.remove(busId);
            }
        }

        @Override
        boolean receive(Conn c, byte[] p, int off, int len) throws IOException {
            return switch (zmtp.feed(p, off, len)) {
                case OK -> true;
                case SUBSCRIBE -> {
                    c.sendData(h2Stream, false, ZmtpSubscriber.SUBSCRIBE_ALL, 0, ZmtpSubscriber.SUBSCRIBE_ALL.length);
                    yield true;
                }
                case BROKEN -> false;
            };
        }

        @Override
        void publisherEnded(Conn c) throws IOException {
            c.sendData(h2Stream, true, ZmtpSubscriber.SUBSCRIBE_ALL, 0, 0); // our end of the stream
        }

        @Override
        void cut() {
            opened.countDown();
        }
    }

    /** The broker's connection, read and written with the project's frame codec. */
    private final class Conn implements FrameHandler {
        final SSLSocket socket;
        final Http2Reader reader;
        final Http2Writer writer;
        final FrameDecoder<Frame> decoder = FrameDecoder.forClientFrames();
        volatile int sessionStream;
        volatile boolean welcomed; // no heartbeat may precede the welcome
        long connUnacked;

        Conn(SSLSocket socket) throws IOException {
            this.socket = socket;
            socket.setTcpNoDelay(true);
            socket.startHandshake();
            try {
                Http2Reader.readClientPreface(socket.getInputStream());
            } catch (Http2Error e) {
                throw new IOException(e);
            }
            reader = new Http2Reader(socket.getInputStream(), this);
            reader.maxFrameSize(Math.max(MAX_FRAME, Http2Reader.DEFAULT_MAX_FRAME_SIZE));
            writer = new Http2Writer(socket.getOutputStream());
            Map<Integer, Long> settings = new LinkedHashMap<>();
            settings.put(Http2.SETTINGS_INITIAL_WINDOW_SIZE, (long) STREAM_WINDOW);
            settings.put(Http2.SETTINGS_MAX_FRAME_SIZE, (long) MAX_FRAME);
            settings.put(Http2.SETTINGS_MAX_CONCURRENT_STREAMS, 8_192L);
            writer.settings(settings);
            writer.windowUpdate(0, CONNECTION_WINDOW - 65_535);
            writer.flush();
        }

        /** DATA on a stream (split at the broker's maximum frame size); an empty one with END_STREAM ends it. */
        void sendData(int stream, boolean endStream, byte[] p, int off, int len) throws IOException {
            writer.data(stream, endStream, p, off, len);
            writer.flush();
        }

        /** A response head: {@code :status 200}, and the bus content type on the session. */
        void sendStatus200(int stream, boolean session) throws IOException {
            List<HeaderField> head = session
                    ? List.of(STATUS_200, new HeaderField("content-type", "application/x-continuum-bus"))
                    : List.of(STATUS_200);
            writer.headers(stream, false, head);
            writer.flush();
        }

        void sendReset(int stream, int errorCode) throws IOException {
            writer.rstStream(stream, errorCode);
            writer.flush();
        }

        void readLoop() throws IOException {
            try {
                while (reader.nextFrame()) {
                    // every frame goes to this connection's handler methods
                }
            } catch (Http2Error e) {
                throw new IOException("the broker broke an HTTP/2 rule", e);
            }
        }

        @Override
        public void headers(int stream, boolean endStream, List<HeaderField> fields) throws Http2Error {
            String path = null;
            for (HeaderField f : fields) {
                if (f.name().equals(":path")) {
                    path = f.value();
                }
            }
            try {
                if ("/bus/v1/session".equals(path)) {
                    sessionStream = stream;
                    sendStatus200(stream, true);
                } else if (path != null && path.startsWith("/bus/v1/streams/")) {
                    Downstream b = byBusId.get(Long.parseLong(path.substring("/bus/v1/streams/".length())));
                    if (b == null) {
                        sendReset(stream, ErrorCode.CANCEL.code());
                        return;
                    }
                    byH2Stream.put(stream, b);
                    b.opened(this, stream);
                } else {
                    log("unexpected request " + path);
                    sendReset(stream, ErrorCode.REFUSED_STREAM.code());
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void data(int stream, boolean endStream, ByteBuffer data, int flowControlled) {
            try { // the bytes are written onward (or decoded) before returning: the reader reuses its buffer
                onData(stream, endStream, data.array(), data.arrayOffset() + data.position(), data.remaining(),
                        flowControlled);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private void onData(int stream, boolean endStream, byte[] p, int off, int n, int len) throws IOException {
            if (stream == sessionStream) {
                try {
                    decoder.decode(p, off, n, this::clientFrame);
                } catch (ProtocolException e) {
                    throw new IOException("bad session frame", e);
                }
                ack(null, len);
                return;
            }
            Downstream d = byH2Stream.get(stream);
            if (d != null) {
                if (!d.receive(this, p, off, n)) {
                    byH2Stream.remove(stream);
                    sendReset(stream, ErrorCode.CANCEL.code());
                    d.cut();
                    d = null;
                }
                dataBytes.addAndGet(n);
                if (endStream && d != null) { // the publisher closed
                    byH2Stream.remove(stream);
                    d.publisherEnded(this);
                }
            }
            ack(d, len);
        }

        @Override
        public void rstStream(int stream, int errorCode) {
            Downstream d = byH2Stream.remove(stream);
            if (d != null) {
                resets.incrementAndGet();
                d.cut();
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

        @Override
        public void goAway(int lastStreamId, int errorCode, byte[] debugData) {
            log("GOAWAY from the broker: last stream " + lastStreamId + ", error " + errorCode + ", "
                    + new String(debugData, StandardCharsets.UTF_8));
        }

        // WINDOW_UPDATE, PRIORITY: the router sends little and ignores the broker's window

        private void flushQuietly() {
            try {
                writer.flush();
            } catch (IOException e) {
                closeQuietly(socket); // the read loop ends at its next read
            }
        }

        private void ack(Downstream b, int len) throws IOException {
            int step = STREAM_WINDOW / 4;
            boolean any = false;
            if (b != null) {
                b.unacked += len;
                if (b.unacked >= step) {
                    writer.windowUpdate(b.h2Stream, b.unacked);
                    b.unacked = 0;
                    any = true;
                }
            }
            connUnacked += len;
            if (connUnacked >= CONNECTION_WINDOW / 4) {
                writer.windowUpdate(0, (int) connUnacked);
                connUnacked = 0;
                any = true;
            }
            if (any) {
                writer.flush();
            }
        }

        private void clientFrame(Frame f) {
            try {
                switch (f) {
                    case Frame.Hello h -> {
                        byte[] w = FrameCodec.encodeJson("{\"type\":\"welcome\",\"protocol_version\":1,"
                                + "\"session_id\":\"lean\",\"max_streams\":4096}");
                        sendData(sessionStream, false, w, 0, w.length);
                        welcomed = true;
                        sessionUp.countDown();
                        log("session welcomed (" + h.clientId() + ")");
                    }
                    case Frame.StreamClosed c -> {
                        if (c.code() != io.continuum.broker.protocol.Code.UPSTREAM_CLOSED) {
                            closed.incrementAndGet(); // upstream_closed is every run's end; the rest cut a stream
                            closedByCode.computeIfAbsent(String.valueOf(c.code()), k -> new AtomicLong()).incrementAndGet();
                        }
                        log("stream_closed " + c.streamId() + " " + c.code());
                    }
                    case Frame.StreamRefused r -> {
                        refused.incrementAndGet();
                        log("stream_refused " + r.streamId() + " " + r.code());
                        Downstream d = byBusId.get(r.streamId());
                        if (d != null) {
                            d.cut();
                        }
                    }
                    default -> {
                        // heartbeat, stream_opened, draining
                    }
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
