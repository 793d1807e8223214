package io.continuum.broker.testing.bus;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.continuum.broker.protocol.BusProtocol;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.FrameDecoder;
import io.continuum.broker.protocol.ProtocolException;
import io.continuum.broker.protocol.SessionLimits;

/**
 * A router that speaks the bus server side of bus-protocol-v1.md over real TLS and HTTP/2, for
 * tests and the demo. It checks the bearer credential, reads {@code hello}, answers
 * {@code welcome} (or a scripted refusal), sends {@code heartbeat} at the negotiated interval while the session
 * lasts (unless told not to), records every frame the broker sends, and hands each data stream to the caller.
 * Decisions are the caller's: nothing is subscribed unless asked.
 */
public final class InProcessRouter implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(InProcessRouter.class.getName());

    private final BusServer server;
    private final String credential;
    private final int connectionWindowIncrement;
    private final boolean heartbeats;
    private final Map<String, String> earlyHints;
    private final LinkedBlockingQueue<RouterSession> sessions = new LinkedBlockingQueue<>();
    private final Map<Long, LinkedBlockingQueue<RouterDataStream>> dataStreams = new ConcurrentHashMap<>();
    private final Set<Long> expected = ConcurrentHashMap.newKeySet();
    private final Set<String> liveSessionIds = ConcurrentHashMap.newKeySet();
    private final Set<RouterDataStream> live = ConcurrentHashMap.newKeySet();
    private final Set<RouterSession> liveSessions = ConcurrentHashMap.newKeySet();
    private final AtomicInteger sessionCount = new AtomicInteger();
    private volatile SessionPolicy sessionPolicy;
    private volatile StreamPolicy streamPolicy = StreamPolicy.ACCEPT;
    private final Http2Stack stack;

    /**
     * What the router answers a session attempt with.
     */
    @FunctionalInterface
    public interface SessionPolicy {
        /**
         * Decides the answer to a hello.
         *
         * @param hello the broker's hello (null when the request was refused before reading it)
         * @return the answer
         */
        SessionAnswer answer(Frame.Hello hello);
    }

    /**
     * An answer to a session attempt.
     *
     * @param status  HTTP status (non-200 refuses before reading hello)
     * @param headers extra response headers
     * @param first   first frame after hello (welcome, error, anything), or null for none
     * @param delay   wait before answering
     */
    public record SessionAnswer(int status, Map<String, String> headers, Frame.RouterFrame first, Duration delay) {
        /**
         * A welcome with these limits.
         *
         * @param heartbeatMs heartbeat interval, or -1 to leave it out
         * @param idleMs      idle timeout, or -1 to leave it out
         * @return answer
         */
        public static SessionAnswer welcome(long heartbeatMs, long idleMs) {
            return new SessionAnswer(200, Map.of(), new Frame.Welcome(1, UUID.randomUUID().toString(),
                    heartbeatMs < 0 ? OptionalLong.empty() : OptionalLong.of(heartbeatMs),
                    idleMs < 0 ? OptionalLong.empty() : OptionalLong.of(idleMs),
                    OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty()), Duration.ZERO);
        }

        /**
         * A welcome with every limit given (-1 leaves a limit out).
         *
         * @param heartbeatMs  heartbeat interval
         * @param idleMs       idle timeout
         * @param bufferBytes  per-stream buffer budget
         * @param frameBytes   max frame bytes
         * @return answer
         */
        public static SessionAnswer welcome(long heartbeatMs, long idleMs, long maxStreams, long bufferBytes,
                                            long frameBytes) {
            return new SessionAnswer(200, Map.of(), new Frame.Welcome(1, UUID.randomUUID().toString(),
                    opt(heartbeatMs), opt(idleMs), opt(maxStreams), opt(bufferBytes), opt(frameBytes)), Duration.ZERO);
        }

        /**
         * A 200 whose first frame is {@code first}.
         *
         * @param first first frame (welcome, error, anything)
         * @return answer
         */
        public static SessionAnswer first(Frame.RouterFrame first) {
            return new SessionAnswer(200, Map.of(), first, Duration.ZERO);
        }

        private static OptionalLong opt(long v) {
            return v < 0 ? OptionalLong.empty() : OptionalLong.of(v);
        }

        /**
         * An HTTP status refusal.
         *
         * @return answer
         */
        public static SessionAnswer status(int status) {
            return new SessionAnswer(status, Map.of(), null, Duration.ZERO);
        }
    }

    /**
     * What the router answers a data stream with.
     */
    public enum StreamPolicy {
        /** 200 at once. */
        ACCEPT,
        /** Never answer the head (the broker's 10 s response-head deadline applies). */
        HOLD_HEAD,
        /** 404 unknown_stream. */
        NOT_FOUND
    }

    private InProcessRouter(Builder b) {
        this.credential = b.credential;
        this.connectionWindowIncrement = b.connectionWindowIncrement;
        this.heartbeats = b.heartbeats;
        this.earlyHints = b.earlyHints;
        this.sessionPolicy = b.sessionPolicy;
        this.stack = b.stack;
        BusServer.Options options = new BusServer.Options(b.privateKey, b.certChain, b.port, b.tcpNoDelay,
                b.maxConcurrentStreams);
        server = switch (b.stack) {
            case HELIDON -> new HelidonBusServer(options, this::serve);
            case NETTY -> new NettyBusServer(options, this::serve);
        };
    }

    /** @return the HTTP/2 server stack it runs on */
    public Http2Stack stack() {
        return stack;
    }

    /**
     * Sends a graceful GOAWAY (HTTP/2 NO_ERROR) on every open connection: the streams open there run on, new ones
     * are not accepted. Only on {@link Http2Stack#NETTY}: Helidon's server has no call for it.
     *
     * @throws UnsupportedOperationException on Helidon's server
     */
    public void goAway() {
        server.goAway();
    }

    private void serve(Exchange x) throws Exception {
        String path = x.path();
        if (path.equals(BusProtocol.SESSION_PATH)) {
            session(x);
        } else if (path.startsWith(BusProtocol.STREAM_PATH_PREFIX)) {
            dataStream(x, path.substring(BusProtocol.STREAM_PATH_PREFIX.length()));
        } else {
            x.respond(404, Map.of(), new byte[0]);
        }
    }

    /**
     * A builder.
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The bus URL, {@code https://localhost:<port>}.
     *
     * @return URL
     */
    public URI url() {
        return URI.create("https://localhost:" + server.port());
    }

    /**
     * The port.
     *
     * @return port
     */
    public int port() {
        return server.port();
    }

    /**
     * Changes how later session attempts are answered.
     */
    public void sessionPolicy(SessionPolicy policy) {
        this.sessionPolicy = Objects.requireNonNull(policy);
    }

    /**
     * Changes how later data streams are answered.
     */
    public void streamPolicy(StreamPolicy policy) {
        this.streamPolicy = Objects.requireNonNull(policy);
    }

    /**
     * Waits for the next welcomed (or answered) session.
     *
     * @param timeout longest wait
     * @return the session
     */
    public RouterSession awaitSession(Duration timeout) {
        try {
            RouterSession s = sessions.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (s == null) {
                throw new AssertionError("no session within " + timeout);
            }
            return s;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Waits for the data stream the broker opens for a subscribe.
     *
     * @param timeout  longest wait
     * @return the stream
     */
    public RouterDataStream awaitDataStream(long streamId, Duration timeout) {
        try {
            RouterDataStream s = queueFor(streamId).poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (s == null) {
                throw new AssertionError("no data stream " + streamId + " within " + timeout);
            }
            return s;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Session attempts that reached the handler.
     *
     * @return count
     */
    public int sessionAttempts() {
        return sessionCount.get();
    }

    void expectStream(long id) {
        expected.add(id);
    }

    void forgetStream(long id) {
        expected.remove(id);
    }

    private LinkedBlockingQueue<RouterDataStream> queueFor(long id) {
        return dataStreams.computeIfAbsent(id, k -> new LinkedBlockingQueue<>());
    }

    private boolean authorized(Map<String, String> headers) {
        if (credential == null) {
            return true;
        }
        return headers.getOrDefault("authorization", "").equals("Bearer " + credential);
    }

    private void session(Exchange x) throws Exception {
        sessionCount.incrementAndGet();
        if (!authorized(x.headers())) {
            x.respond(401, Map.of(), new byte[0]);
            return;
        }
        if (connectionWindowIncrement > 0) {
            // the session stream is the first on its connection: open the connection window once per connection
            x.openConnectionWindow(connectionWindowIncrement);
        }
        InputStream in = x.requestBody();
        SessionPolicy policy = sessionPolicy;
        SessionAnswer early = policy.answer(null);
        if (early != null && early.status() != 200) {
            x.respond(early.status(), early.headers(), new byte[0]);
            return;
        }
        FrameDecoder<Frame> decoder = FrameDecoder.forClientFrames();
        Frame.Hello hello = null;
        byte[] buf = new byte[64 * 1024];
        java.util.ArrayDeque<Frame> pending = new java.util.ArrayDeque<>();
        while (hello == null) {
            int n = in.read(buf);
            if (n < 0) {
                return;
            }
            decoder.decode(buf, 0, n, pending::add);
            Frame first = pending.pollFirst();
            if (first != null) {
                if (!(first instanceof Frame.Hello h)) {
                    x.respond(400, Map.of(), "first frame is not hello".getBytes(StandardCharsets.UTF_8));
                    return;
                }
                hello = h;
            }
        }
        SessionAnswer answer = policy.answer(hello);
        if (!answer.delay().isZero()) {
            Thread.sleep(answer.delay());
        }
        if (answer.status() != 200) {
            x.respond(answer.status(), answer.headers(), new byte[0]);
            return;
        }
        Map<String, String> head = new HashMap<>(answer.headers());
        head.put("content-type", BusProtocol.SESSION_CONTENT_TYPE);
        if (earlyHints != null) {
            x.informational(103, earlyHints);
        }
        OutputStream out = x.startResponse(200, head);
        String sessionId = answer.first() instanceof Frame.Welcome w ? w.sessionId() : null;
        RouterSession session = new RouterSession(this, hello, sessionId, out);
        if (answer.first() != null) {
            session.send(answer.first());
        }
        if (sessionId != null) {
            liveSessionIds.add(sessionId);
        }
        if (heartbeats && answer.first() instanceof Frame.Welcome w) {
            session.startHeartbeats(SessionLimits.negotiate(w).heartbeatInterval());
        }
        for (Frame f : pending) {
            session.received(f);
        }
        sessions.add(session);
        liveSessions.add(session);
        Thread reader = Thread.ofVirtual().name("router-session-reader").start(() -> {
            String cause = "end_stream";
            try {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    for (Frame f : decoder.decode(java.nio.ByteBuffer.wrap(buf, 0, n))) {
                        session.received(f);
                    }
                }
            } catch (IOException | RuntimeException e) {
                cause = String.valueOf(e);
            } catch (ProtocolException e) {
                cause = "protocol_error: " + e.getMessage();
            }
            session.brokerEnded(cause);
        });
        boolean abort;
        try {
            abort = session.awaitFinish();
        } finally {
            liveSessions.remove(session);
        }
        if (sessionId != null) {
            liveSessionIds.remove(sessionId);
        }
        if (abort) {
            x.reset();
            reader.join(Duration.ofSeconds(10));
            return;
        }
        out.close();
        reader.join(Duration.ofSeconds(5));
    }

    private void dataStream(Exchange x, String idText) throws Exception {
        byte[] unknown = "unknown_stream".getBytes(StandardCharsets.UTF_8);
        long id;
        try {
            id = Long.parseLong(idText);
        } catch (RuntimeException e) {
            x.respond(404, Map.of(), unknown);
            return;
        }
        Map<String, String> headers = x.headers();
        if (!authorized(headers)) {
            x.respond(401, Map.of(), new byte[0]);
            return;
        }
        String sid = headers.getOrDefault(BusProtocol.SESSION_ID_HEADER, "");
        StreamPolicy policy = streamPolicy;
        if (!liveSessionIds.contains(sid) || !expected.remove(id) || policy == StreamPolicy.NOT_FOUND) {
            x.respond(404, Map.of(), unknown);
            return;
        }
        InputStream in = x.requestBody();
        if (policy == StreamPolicy.HOLD_HEAD) {
            RouterDataStream held = new RouterDataStream(id, headers, in, OutputStream.nullOutputStream(),
                    () -> { });
            live.add(held);
            queueFor(id).add(held);
            try {
                held.awaitDone(Duration.ofMinutes(10));
            } finally {
                live.remove(held);
            }
            return;
        }
        if (earlyHints != null) {
            x.informational(103, earlyHints);
        }
        OutputStream out = x.startResponse(200, Map.of("content-type", BusProtocol.STREAM_CONTENT_TYPE));
        RouterDataStream ds = new RouterDataStream(id, headers, in, out, x::reset);
        live.add(ds);
        queueFor(id).add(ds);
        // The handler lives until both directions are done (or the stream is reset): returning earlier
        // would make Helidon discard the rest of the broker's request body.
        try {
            ds.awaitDone(Duration.ofDays(1));
        } finally {
            live.remove(ds);
        }
    }

    @Override
    public void close() {
        for (RouterDataStream ds : live) {
            ds.release();
        }
        for (RouterSession rs : liveSessions) {
            rs.brokerEnded("router closing");
        }
        server.close();
    }

    /**
     * Builder of {@link InProcessRouter}.
     */
    public static final class Builder {
        private PrivateKey privateKey;
        private List<X509Certificate> certChain;
        private String credential;
        private int port;
        private long maxConcurrentStreams = 8192;
        private boolean tcpNoDelay;
        private int connectionWindowIncrement;
        private boolean heartbeats = true;
        private Map<String, String> earlyHints;
        private SessionPolicy sessionPolicy = hello -> hello == null ? null : SessionAnswer.welcome(-1, -1);
        private Http2Stack stack = Http2Stack.fromSystemProperty();

        private Builder() {
        }

        /**
         * Server key and certificate chain.
         *
         * @param chain certificate chain, leaf first
         */
        public Builder tls(PrivateKey key, List<X509Certificate> chain) {
            this.privateKey = key;
            this.certChain = List.copyOf(chain);
            return this;
        }

        /**
         * The credential the router accepts (null accepts any). It is registered with
         * {@link io.continuum.broker.testing.secrets.Secrets}: from now on it must appear in no log or output.
         */
        public Builder credential(String credential) {
            if (credential != null) {
                io.continuum.broker.testing.secrets.Secrets.register(credential);
            }
            this.credential = credential;
            return this;
        }

        /**
         * Port (0 for any free one).
         */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /**
         * TCP_NODELAY on the router's accepted sockets (Helidon's default is off, so the router's small
         * frames, WINDOW_UPDATEs above all, wait for Nagle and the peer's delayed ACK: about 40 ms each).
         * Off by default, as before; the load harness turns it on, as a production router would.
         *
         * @param on whether to set TCP_NODELAY
         */
        public Builder tcpNoDelay(boolean on) {
            this.tcpNoDelay = on;
            return this;
        }

        /**
         * Opens each connection's receive window by {@code bytes} when its session stream arrives. Helidon's
         * server keeps its connection window at its 65,535-byte stream window and returns it only as handlers
         * read, so a single unread data stream stops every other stream of the connection (pinned from the
         * client side by the relay's {@code StreamIsolationTest}). 0 (the default) leaves Helidon's behaviour;
         * the load harness opens it, as a production router should (docs/protocol.md).
         *
         * @param bytes connection window increment, 0 for none
         */
        public Builder connectionWindowIncrement(int bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("negative window increment");
            }
            this.connectionWindowIncrement = bytes;
            return this;
        }

        /**
         * Whether the router sends {@code heartbeat} every negotiated interval after its {@code welcome}, as a router
         * must for the broker's idle timer (bus-protocol-v1.md section 4 item 2: any frame from the router resets
         * it). On by default; tests of the broker's idle timeout turn it off to be the router that falls silent.
         *
         * @param on whether to send heartbeats
         */
        public Builder heartbeats(boolean on) {
            this.heartbeats = on;
            return this;
        }

        /**
         * Sends {@code 103 Early Hints} with these headers before every {@code 200} (the session's and each data
         * stream's), as a router behind a CDN-style stack may: the broker must read past it (RFC 9113 section 8.1).
         * Only on {@link Http2Stack#NETTY}: Helidon's server has no call for it.
         *
         * @param headers the hint's headers, e.g. {@code link}
         */
        public Builder earlyHints(Map<String, String> headers) {
            this.earlyHints = Map.copyOf(headers);
            return this;
        }

        /**
         * The HTTP/2 server stack (default: what {@link Http2Stack#PROPERTY} names, else Helidon's).
         */
        public Builder stack(Http2Stack stack) {
            this.stack = Objects.requireNonNull(stack);
            return this;
        }

        /**
         * SETTINGS_MAX_CONCURRENT_STREAMS the router advertises.
         */
        public Builder maxConcurrentStreams(long max) {
            this.maxConcurrentStreams = max;
            return this;
        }

        /**
         * How session attempts are answered (default: welcome with default limits).
         */
        public Builder sessionPolicy(SessionPolicy policy) {
            this.sessionPolicy = policy;
            return this;
        }

        /**
         * Builds and starts the router.
         *
         * @return running router
         */
        public InProcessRouter start() {
            Objects.requireNonNull(privateKey, "tls(key, chain) is required");
            return new InProcessRouter(this);
        }
    }

    /**
     * Exposes the policy type to lambdas in tests.
     *
     * @return policy
     */
    public static SessionPolicy policy(Function<Frame.Hello, SessionAnswer> f) {
        return f::apply;
    }
}
