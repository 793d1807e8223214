package io.continuum.broker.relay;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.FrameDecoder;
import io.continuum.broker.protocol.ProtocolException;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.testing.router.RawH2Peer;

/**
 * A router played frame by frame on {@link RawH2Peer}, for the behaviours Helidon's server cannot show
 * (ending a response while the request body is open, reading a request body after its response ended).
 * One pump thread reads every HTTP/2 frame: DATA on the session stream (id 1) is decoded into bus frames,
 * DATA on data streams is collected per stream, and every DATA frame's bytes are granted back at once.
 */
final class RawRouter implements AutoCloseable {
    static final int SESSION = 1;

    private final RawH2Peer.Connection wire;
    private final FrameDecoder<Frame> decoder = FrameDecoder.forClientFrames();
    private final BlockingQueue<Frame> fromBroker = new LinkedBlockingQueue<>();
    private final Map<Integer, StreamState> streams = new ConcurrentHashMap<>();
    private final List<String> dataStreamEvents = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Thread pump;
    /** Counted down when the broker ends its session request body (END_STREAM on stream 1). */
    private final java.util.concurrent.CountDownLatch sessionRequestEnded = new java.util.concurrent.CountDownLatch(1);
    /** Run by the pump the moment it reads that END_STREAM, before it reads anything else. */
    private volatile Runnable onSessionRequestEnd;

    /** What the router saw of one data stream. */
    static final class StreamState {
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        volatile boolean headers;
        volatile boolean requestEnded;
        volatile boolean reset;

        synchronized byte[] bytes() {
            return body.toByteArray();
        }
    }

    /**
     * Accepts the broker's connection, reads its session HEADERS and {@code hello}, answers 200 and
     * {@code welcome}.
     */
    static RawRouter acceptSession(RawH2Peer peer, Duration wait) throws Exception {
        return acceptSession(peer, wait, new Frame.Welcome(1, "raw-session", OptionalLong.empty(),
                OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty()), true);
    }

    /**
     * @param welcome            the {@code welcome} to answer with
     * @param grantSessionWindow false: the session stream's window is never replenished, so the broker's
     *                           session writes block once it has sent 65,535 bytes (a router that stopped reading)
     */
    static RawRouter acceptSession(RawH2Peer peer, Duration wait, Frame.Welcome welcome, boolean grantSessionWindow)
            throws Exception {
        RawH2Peer.Connection wire = peer.accept(wait);
        wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == SESSION, wait);
        RawRouter router = new RawRouter(wire, grantSessionWindow);
        router.await(Frame.Hello.class, f -> true, wait);
        wire.send(RawH2Peer.Frame.HEADERS, 0x4, SESSION, statusOkBusContentType());
        router.send(welcome);
        return router;
    }

    /**
     * Accepts the broker's connection and reads its session HEADERS and {@code hello}, answering nothing:
     * the test writes the response head and the first frames itself through {@link #wire()}.
     */
    static RawRouter acceptHello(RawH2Peer peer, Duration wait) throws Exception {
        RawH2Peer.Connection wire = peer.accept(wait);
        wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == SESSION, wait);
        RawRouter router = new RawRouter(wire, true);
        router.await(Frame.Hello.class, f -> true, wait);
        return router;
    }

    private final boolean grantSessionWindow;

    private RawRouter(RawH2Peer.Connection wire, boolean grantSessionWindow) {
        this.wire = wire;
        this.grantSessionWindow = grantSessionWindow;
        this.pump = Thread.ofVirtual().name("raw-router-pump").start(this::pump);
    }

    private void pump() {
        try {
            while (true) {
                RawH2Peer.Frame f = wire.next(x -> true, Duration.ofDays(1));
                int id = f.streamId();
                if (id == 0) {
                    continue;
                }
                if (id == SESSION) {
                    if (f.type() == RawH2Peer.Frame.DATA && f.payload().length > 0) {
                        fromBroker.addAll(decoder.decode(ByteBuffer.wrap(f.payload())));
                    }
                    if (f.endStream()) {
                        sessionRequestEnded.countDown();
                        Runnable r = onSessionRequestEnd;
                        if (r != null) {
                            r.run();
                            return;
                        }
                    }
                } else {
                    StreamState s = streams.computeIfAbsent(id, k -> new StreamState());
                    if (f.type() == RawH2Peer.Frame.HEADERS) {
                        dataStreamEvents.add("HEADERS " + id);
                    } else if (f.type() == RawH2Peer.Frame.RST_STREAM) {
                        dataStreamEvents.add("RST_STREAM " + id);
                    } else if (f.endStream()) {
                        dataStreamEvents.add("END_STREAM " + id);
                    }
                    switch (f.type()) {
                        case RawH2Peer.Frame.HEADERS -> s.headers = true;
                        case RawH2Peer.Frame.DATA -> {
                            synchronized (s) {
                                s.body.write(f.payload());
                            }
                        }
                        case RawH2Peer.Frame.RST_STREAM -> s.reset = true;
                        default -> {
                        }
                    }
                    if (f.endStream()) {
                        s.requestEnded = true;
                    }
                }
                if (f.type() == RawH2Peer.Frame.DATA && f.payload().length > 0) {
                    wire.sendWindowUpdate(0, f.payload().length);
                    if (!f.endStream() && (id != SESSION || grantSessionWindow)) {
                        wire.sendWindowUpdate(id, f.payload().length);
                    }
                }
            }
        } catch (InterruptedException | TimeoutException | IOException | ProtocolException e) {
            // closed, or the test is over
        }
    }

    void send(Frame.RouterFrame frame) throws IOException {
        wire.sendData(SESSION, FrameCodec.encode(frame), false);
    }

    void subscribe(long streamId, String namespace, String host, int port) throws IOException {
        send(new Frame.Subscribe(streamId, new Target.ZmqTcp(namespace, host, port)));
    }

    <F extends Frame> F await(Class<F> type, Predicate<F> match, Duration wait) throws Exception {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            Frame f = fromBroker.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (f == null) {
                throw new TimeoutException("no " + type.getSimpleName() + " from the broker");
            }
            if (type.isInstance(f) && match.test(type.cast(f))) {
                return type.cast(f);
            }
        }
    }

    /** @return bus frames the broker sent that nobody awaited yet */
    List<Frame> drainFromBroker() {
        List<Frame> out = new java.util.ArrayList<>();
        fromBroker.drainTo(out);
        return out;
    }

    /**
     * @return HEADERS, END_STREAM and RST_STREAM the broker sent on data streams, in wire order, e.g.
     *         {@code "RST_STREAM 3"}
     */
    List<String> dataStreamEvents() {
        return List.copyOf(dataStreamEvents);
    }

    StreamState stream(int http2StreamId) {
        return streams.computeIfAbsent(http2StreamId, k -> new StreamState());
    }

    /** The router closes the TCP connection the moment it reads the broker's END_STREAM on the session. */
    void closeRightAfterSessionEnd() {
        onSessionRequestEnd = wire::close;
    }

    boolean awaitSessionRequestEnd(Duration wait) throws InterruptedException {
        return sessionRequestEnded.await(wait.toNanos(), TimeUnit.NANOSECONDS);
    }

    RawH2Peer.Connection wire() {
        return wire;
    }

    @Override
    public void close() {
        pump.interrupt();
        wire.close();
    }

    /** HPACK: {@code :status 200} (indexed) and {@code content-type} as a literal without indexing. */
    static byte[] statusOkBusContentType() {
        byte[] value = "application/x-continuum-bus".getBytes(StandardCharsets.US_ASCII);
        byte[] block = new byte[4 + value.length];
        block[0] = (byte) 0x88;
        block[1] = 0x0f;          // literal without indexing, name index 31 (content-type) = 15 + 16
        block[2] = 0x10;
        block[3] = (byte) value.length;
        System.arraycopy(value, 0, block, 4, value.length);
        return block;
    }
}
