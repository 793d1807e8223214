package io.continuum.broker.testing.router;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.FrameDecoder;
import io.continuum.broker.protocol.ProtocolException;
import io.continuum.broker.protocol.Target;

/**
 * The router side of one bus session played frame by frame on a {@link RawH2Peer} connection, for what
 * Helidon's server cannot do: end a response while the request body is open, read a request body after its
 * response ended, put several bus frames in one DATA frame, reset a data stream the moment its HEADERS
 * arrive, or leave a window closed on purpose.
 *
 * <p>One pump thread takes every HTTP/2 frame in wire order from the connection (whose codec decodes every header
 * block, so a data stream's bus id is read off its {@code :path}), decodes DATA on the session stream into bus frames, records what each data stream carried,
 * grants windows as {@link Windows} says, and only then hands the raw frame to {@link #next}. A test either
 * awaits bus frames and watches streams, or steps through the raw frames itself; both see the same order.
 */
public final class RawBusRouter implements AutoCloseable {
    /** The session stream's HTTP/2 id (the broker's first request). */
    public static final int SESSION_STREAM = 1;
    private static final String STREAM_PATH = "/bus/v1/streams/";

    /** Who replenishes the broker's send windows. */
    public enum Windows {
        /** The pump grants every DATA frame's bytes back at once, on the connection and on its stream. */
        GRANT_AS_READ,
        /**
         * As {@link #GRANT_AS_READ}, but the session stream's window is never replenished: the broker's session
         * writes block once it sent 65,535 bytes (a router that stopped reading its session).
         */
        GRANT_AS_READ_BUT_SESSION,
        /**
         * The connection and the session stream are opened by 1 GiB on accept; data streams keep their initial
         * window and only the test grants more ({@link RawH2Peer.Connection#sendWindowUpdate}).
         */
        OPEN_SESSION_ONLY
    }

    /** What the router saw of one data stream. */
    public static final class StreamSeen {
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();
        private volatile boolean headers;
        private volatile boolean requestEnded;
        private volatile boolean reset;

        /** @return whether the broker's HEADERS arrived */
        public boolean headers() {
            return headers;
        }

        /** @return whether the broker ended its request body (END_STREAM) */
        public boolean requestEnded() {
            return requestEnded;
        }

        /** @return whether the broker reset the stream */
        public boolean reset() {
            return reset;
        }

        /** @return the request body bytes so far */
        public synchronized byte[] bytes() {
            return body.toByteArray();
        }

        private synchronized void append(byte[] data) {
            body.writeBytes(data);
        }
    }

    private final RawH2Peer.Connection wire;
    private final Windows windows;
    private final FrameDecoder<Frame> decoder = FrameDecoder.forClientFrames();
    private final BlockingQueue<RawH2Peer.Frame> rawFrames = new LinkedBlockingQueue<>();
    private final BlockingQueue<Frame> unawaited = new LinkedBlockingQueue<>();
    private final List<Frame> busFrames = new CopyOnWriteArrayList<>();
    private final Map<Integer, StreamSeen> streams = new ConcurrentHashMap<>();
    private final Map<Integer, Long> busIds = new ConcurrentHashMap<>();
    private final List<String> dataStreamEvents = new CopyOnWriteArrayList<>();
    private final List<String> wireEvents = new CopyOnWriteArrayList<>();
    /** DATA bytes the router sent on the session stream, for {@link #sendWithinWindow}. */
    private final AtomicLong sessionBytesSent = new AtomicLong();
    private static final long INITIAL_WINDOW = 65_535;
    private final CountDownLatch sessionRequestEnded = new CountDownLatch(1);
    private volatile Runnable onSessionRequestEnd;
    private volatile Exception pumpFailure;
    private final Thread pump;

    private RawBusRouter(RawH2Peer.Connection wire, Windows windows) {
        this.wire = wire;
        this.windows = windows;
        this.pump = Thread.ofVirtual().name("raw-bus-router-pump").start(this::pump);
    }

    /**
     * Accepts the broker's connection and reads its session HEADERS, answering nothing yet: the test sends the
     * response head ({@link #sendSessionHead()}) and the first bus frame.
     */
    public static RawBusRouter accept(RawH2Peer peer, Duration wait, Windows windows) throws Exception {
        RawH2Peer.Connection wire = peer.accept(wait);
        wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == SESSION_STREAM, wait);
        if (windows == Windows.OPEN_SESSION_ONLY) {
            wire.sendWindowUpdate(0, 1 << 30);
            wire.sendWindowUpdate(SESSION_STREAM, 1 << 30);
        }
        return new RawBusRouter(wire, windows);
    }

    /** Accepts the broker's session, reads its {@code hello} and answers 200 and a default {@code welcome}. */
    public static RawBusRouter acceptSession(RawH2Peer peer, Duration wait) throws Exception {
        return acceptSession(peer, wait, welcome("raw-session"), Windows.GRANT_AS_READ);
    }

    /** Accepts the broker's session, reads its {@code hello} and answers 200 and {@code welcome}. */
    public static RawBusRouter acceptSession(RawH2Peer peer, Duration wait, Frame.Welcome welcome, Windows windows)
            throws Exception {
        RawBusRouter router = acceptHello(peer, wait, windows);
        router.sendSessionHead();
        router.send(welcome);
        return router;
    }

    /** Accepts the broker's session and reads its {@code hello}, answering nothing. */
    public static RawBusRouter acceptHello(RawH2Peer peer, Duration wait, Windows windows) throws Exception {
        RawBusRouter router = accept(peer, wait, windows);
        router.await(Frame.Hello.class, f -> true, wait);
        return router;
    }

    /** Answers the session request: 200 with the bus content type, the body left open. */
    public RawBusRouter sendSessionHead() throws IOException {
        wire.sendHeaders(SESSION_STREAM, false, new HeaderField(":status", "200"),
                new HeaderField("content-type", "application/x-continuum-bus"));
        return this;
    }

    /** Sends one bus frame in its own DATA frame on the session stream. */
    public void send(Frame.RouterFrame frame) throws IOException {
        byte[] bytes = FrameCodec.encode(frame);
        sessionBytesSent.addAndGet(bytes.length);
        wire.sendData(SESSION_STREAM, bytes, false);
    }

    /**
     * As {@link #send}, but within the windows the broker granted for the session stream and the connection, as a
     * router's HTTP/2 layer would: waits (up to {@code wait}) for the broker's WINDOW_UPDATEs. For floods larger
     * than the broker's 64 KiB receive window; the accounting counts what {@link #send} sent on the session stream,
     * and assumes the test sends no DATA on other streams meanwhile.
     */
    public void sendWithinWindow(Frame.RouterFrame frame, Duration wait) throws Exception {
        byte[] bytes = FrameCodec.encode(frame);
        long sent = sessionBytesSent.addAndGet(bytes.length);
        // Both windows start at HTTP/2's 65,535 bytes (the broker's SETTINGS keep that for streams).
        wire.awaitGranted(SESSION_STREAM, sent - INITIAL_WINDOW, wait);
        wire.awaitGranted(0, sent - INITIAL_WINDOW, wait);
        wire.sendData(SESSION_STREAM, bytes, false);
    }

    /** Sends {@code subscribe} for a ZMQ TCP target. */
    public void subscribe(long streamId, String namespace, String host, int port) throws IOException {
        send(new Frame.Subscribe(streamId, new Target.ZmqTcp(namespace, host, port)));
    }

    /** Sends encoded bus frames back to back, in as few DATA frames as HTTP/2 allows. */
    public void sendPacked(byte[]... encodedFrames) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (byte[] f : encodedFrames) {
            all.writeBytes(f);
        }
        try {
            wire.sendData(SESSION_STREAM, all.toByteArray(), false); // the codec splits at the broker's frame size
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The next bus frame of {@code type} matching {@code match} that no earlier await took; frames passed over
     * are dropped from this queue (they stay in {@link #busFrames()}).
     */
    public <F extends Frame> F await(Class<F> type, Predicate<F> match, Duration wait) throws Exception {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            Frame f = unawaited.poll(Math.min(deadline - System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(50)),
                    TimeUnit.NANOSECONDS);
            if (f != null && type.isInstance(f) && match.test(type.cast(f))) {
                return type.cast(f);
            }
            if (f == null) {
                failIfPumpDied();
                if (System.nanoTime() - deadline >= 0) {
                    throw new TimeoutException("no " + type.getSimpleName() + " from the broker");
                }
            }
        }
    }

    /** @return bus frames the broker sent that no {@link #await} took yet */
    public List<Frame> drainFromBroker() {
        List<Frame> out = new ArrayList<>();
        unawaited.drainTo(out);
        return out;
    }

    /** @return every bus frame the broker sent on the session stream so far, {@code hello} first */
    public List<Frame> busFrames() {
        return List.copyOf(busFrames);
    }

    /** The next HTTP/2 frame from the broker, after the pump has processed it. */
    public RawH2Peer.Frame next(Duration wait) throws Exception {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            RawH2Peer.Frame f = rawFrames.poll(Math.min(deadline - System.nanoTime(),
                    TimeUnit.MILLISECONDS.toNanos(50)), TimeUnit.NANOSECONDS);
            if (f != null) {
                return f;
            }
            failIfPumpDied();
            if (System.nanoTime() - deadline >= 0) {
                throw new TimeoutException("no frame from the broker");
            }
        }
    }

    /**
     * Steps through the broker's frames (see {@link #next}) to the HEADERS of the next data stream it opens,
     * answers it {@code 200} with the body left open, and returns its HTTP/2 stream id.
     */
    public int answerNextDataStream(Duration wait) throws Exception {
        return answerNextDataStream(wait, List.of(List.of(new HeaderField(":status", "200"))));
    }

    /**
     * Steps through the broker's frames to the HEADERS of the next data stream and answers it with {@code heads}: each
     * list one header block, in order (informational heads before the final one, say).
     *
     * @return the data stream's HTTP/2 stream id
     */
    public int answerNextDataStream(Duration wait, List<List<HeaderField>> heads) throws Exception {
        int streamId = awaitDataStreamHeaders(wait);
        for (List<HeaderField> head : heads) {
            wire.sendHeaders(streamId, false, head.toArray(HeaderField[]::new));
        }
        return streamId;
    }

    /** Steps through the broker's frames to the HEADERS of the next data stream, answering nothing. */
    public int awaitDataStreamHeaders(Duration wait) throws Exception {
        while (true) {
            RawH2Peer.Frame f = next(wait);
            if (f.type() == RawH2Peer.Frame.HEADERS && f.streamId() != SESSION_STREAM) {
                return f.streamId();
            }
        }
    }

    /** A {@code welcome} naming no limits (the broker applies the protocol's defaults). */
    public static Frame.Welcome welcome(String sessionId) {
        return new Frame.Welcome(1, sessionId, OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(),
                OptionalLong.empty(), OptionalLong.empty());
    }

    /** @return the bus stream id a data stream's HEADERS named in its path, or null */
    public Long busStreamId(int http2StreamId) {
        return busIds.get(http2StreamId);
    }

    /** @return HEADERS, END_STREAM and RST_STREAM on data streams in wire order, e.g. {@code "RST_STREAM 3"} */
    public List<String> dataStreamEvents() {
        return List.copyOf(dataStreamEvents);
    }

    /**
     * @return {@link #dataStreamEvents()} with the session stream's stream answers among them, all in wire order,
     *         e.g. {@code "END_STREAM 3"}, {@code "stream_closed 9"}, {@code "RST_STREAM 3"}, and the session request's
     *         end, {@code "END_STREAM 1"}
     */
    public List<String> wireEvents() {
        return List.copyOf(wireEvents);
    }

    /** @return what the router saw of the data stream with this HTTP/2 id (empty until its first frame) */
    public StreamSeen stream(int http2StreamId) {
        return streams.computeIfAbsent(http2StreamId, k -> new StreamSeen());
    }

    /** The router closes the TCP connection the moment it reads the broker's END_STREAM on the session. */
    public void closeRightAfterSessionEnd() {
        onSessionRequestEnd = wire::close;
    }

    /** @return whether the broker ended its session request body within {@code wait} */
    public boolean awaitSessionRequestEnd(Duration wait) throws InterruptedException {
        return sessionRequestEnded.await(wait.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** @return the HTTP/2 connection, for frames the test writes itself */
    public RawH2Peer.Connection wire() {
        return wire;
    }

    @Override
    public void close() {
        pump.interrupt();
        wire.close();
    }

    private void failIfPumpDied() {
        Exception failure = pumpFailure;
        if (failure != null) {
            throw new IllegalStateException("the raw router's pump failed", failure);
        }
    }

    private void pump() {
        try {
            while (true) {
                RawH2Peer.Frame f = wire.next(x -> true, Duration.ofDays(1));
                if (f.streamId() == SESSION_STREAM) {
                    onSessionFrame(f);
                } else if (f.streamId() != 0) {
                    onDataStreamFrame(f);
                }
                rawFrames.add(f);
                if (f.streamId() == SESSION_STREAM && f.endStream()) {
                    wireEvents.add("END_STREAM " + SESSION_STREAM);
                    sessionRequestEnded.countDown();
                    Runnable r = onSessionRequestEnd;
                    if (r != null) {
                        r.run();
                        return;
                    }
                }
                grant(f);
            }
        } catch (InterruptedException | TimeoutException | IOException e) {
            // closed, or the test is over
        } catch (ProtocolException | RuntimeException e) {
            pumpFailure = e;
        }
    }

    private void onSessionFrame(RawH2Peer.Frame f) throws ProtocolException {
        if (f.type() == RawH2Peer.Frame.DATA && f.payload().length > 0) {
            for (Frame frame : decoder.decode(ByteBuffer.wrap(f.payload()))) {
                busFrames.add(frame);
                switch (frame) {
                    case Frame.StreamOpened o -> wireEvents.add("stream_opened " + o.streamId());
                    case Frame.StreamRefused r -> wireEvents.add("stream_refused " + r.streamId());
                    case Frame.StreamClosed c -> wireEvents.add("stream_closed " + c.streamId());
                    default -> { }
                }
                unawaited.add(frame);
            }
        }
    }

    private void onDataStreamFrame(RawH2Peer.Frame f) {
        int id = f.streamId();
        StreamSeen s = stream(id);
        switch (f.type()) {
            case RawH2Peer.Frame.HEADERS -> {
                dataStreamEvents.add("HEADERS " + id);
                wireEvents.add("HEADERS " + id);
                String path = f.field(":path");
                if (path != null && path.startsWith(STREAM_PATH)) {
                    busIds.put(id, Long.parseLong(path.substring(STREAM_PATH.length())));
                }
                s.headers = true;
            }
            case RawH2Peer.Frame.DATA -> s.append(f.payload());
            case RawH2Peer.Frame.RST_STREAM -> {
                dataStreamEvents.add("RST_STREAM " + id);
                wireEvents.add("RST_STREAM " + id);
                s.reset = true;
            }
            default -> {
            }
        }
        if (f.endStream() && f.type() != RawH2Peer.Frame.RST_STREAM) {
            if (f.type() != RawH2Peer.Frame.HEADERS) {
                dataStreamEvents.add("END_STREAM " + id);
                wireEvents.add("END_STREAM " + id);
            }
            s.requestEnded = true;
        }
    }

    private void grant(RawH2Peer.Frame f) throws IOException {
        if (windows == Windows.OPEN_SESSION_ONLY || f.type() != RawH2Peer.Frame.DATA || f.payload().length == 0) {
            return;
        }
        wire.sendWindowUpdate(0, f.payload().length);
        boolean session = f.streamId() == SESSION_STREAM;
        if (!f.endStream() && (!session || windows == Windows.GRANT_AS_READ)) {
            wire.sendWindowUpdate(f.streamId(), f.payload().length);
        }
    }
}
