package io.continuum.broker.relay.hostile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameDecoder;
import io.continuum.broker.protocol.ProtocolException;
import io.continuum.broker.testing.router.HpackInspector;
import io.continuum.broker.testing.router.RawH2Peer;

/**
 * The router side of one bus session played frame by frame on a {@link RawH2Peer} connection, for
 * what Helidon's server cannot do (several bus frames in one DATA frame, resets as soon as a data
 * stream's HEADERS arrive). The session stream is HTTP/2 stream 1; every window is opened wide at
 * once so the broker's frames never wait for this peer.
 */
final class RawBusSession implements AutoCloseable {
    /** The session stream's HTTP/2 id (the broker's first request). */
    static final int SESSION_STREAM = 1;
    private static final String STREAM_PATH = "/bus/v1/streams/";
    /** HTTP/2 caps a DATA frame at 16 KiB unless the broker raised SETTINGS_MAX_FRAME_SIZE (it does not). */
    private static final int MAX_DATA_FRAME = 16_384;

    final RawH2Peer.Connection connection;
    private final FrameDecoder<Frame> decoder = FrameDecoder.forClientFrames();
    private final List<Frame> fromBroker = new ArrayList<>();
    /** Every header block in order, so the dynamic table stays in step with the broker's encoder. */
    private final HpackInspector hpack = new HpackInspector();
    private final Map<Integer, Long> busIds = new ConcurrentHashMap<>();

    private RawBusSession(RawH2Peer.Connection connection) {
        this.connection = connection;
    }

    /**
     * Accepts the broker's connection, waits for its session HEADERS, opens the windows and answers
     * {@code 200} with the bus content type (the first bus frame is the caller's).
     */
    static RawBusSession accept(RawH2Peer peer, Duration wait) throws Exception {
        RawBusSession s = new RawBusSession(peer.accept(wait));
        s.hpack.decode(s.connection.next(f -> f.type() == RawH2Peer.Frame.HEADERS
                && f.streamId() == SESSION_STREAM, wait).payload());
        s.connection.sendWindowUpdate(0, 1 << 30);
        s.connection.sendWindowUpdate(SESSION_STREAM, 1 << 30);
        s.connection.send(RawH2Peer.Frame.HEADERS, 0x4, SESSION_STREAM, statusOkBusContentType());
        return s;
    }

    /** Sends the bus frames back to back, in as few DATA frames as HTTP/2 allows. */
    void send(byte[]... busFrames) {
        int total = 0;
        for (byte[] f : busFrames) {
            total += f.length;
        }
        ByteBuffer all = ByteBuffer.allocate(total);
        for (byte[] f : busFrames) {
            all.put(f);
        }
        byte[] bytes = all.array();
        try {
            for (int off = 0; off < bytes.length; off += MAX_DATA_FRAME) {
                int n = Math.min(MAX_DATA_FRAME, bytes.length - off);
                byte[] piece = new byte[n];
                System.arraycopy(bytes, off, piece, 0, n);
                connection.sendData(SESSION_STREAM, piece, false);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The next HTTP/2 frame from the broker; DATA on the session stream is also decoded into
     * {@link #busFrames()}.
     */
    RawH2Peer.Frame next(Duration wait) throws InterruptedException, TimeoutException, ProtocolException {
        RawH2Peer.Frame f = connection.next(x -> true, wait);
        if (f.type() == RawH2Peer.Frame.DATA && f.streamId() == SESSION_STREAM) {
            decoder.decode(ByteBuffer.wrap(f.payload()), fromBroker::add);
        }
        if (f.type() == RawH2Peer.Frame.HEADERS) {
            for (HpackInspector.Field field : hpack.decode(f.payload())) {
                if (field.name().equals(":path") && field.value().startsWith(STREAM_PATH)) {
                    busIds.put(f.streamId(), Long.parseLong(field.value().substring(STREAM_PATH.length())));
                }
            }
        }
        return f;
    }

    /** @return the bus stream id a data stream's HEADERS named in its path, or null */
    Long busStreamId(int http2StreamId) {
        return busIds.get(http2StreamId);
    }

    /** Bus frames the broker sent on the session stream so far (hello first). */
    List<Frame> busFrames() {
        return fromBroker;
    }

    @Override
    public void close() {
        connection.close();
    }

    /** HPACK: {@code :status 200} (indexed) and {@code content-type} as a literal without indexing. */
    private static byte[] statusOkBusContentType() {
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
