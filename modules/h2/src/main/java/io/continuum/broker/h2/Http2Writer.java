package io.continuum.broker.h2;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Writes HTTP/2 frames (RFC 9113 section 6) to a stream. It owns the HPACK encoder of its direction (honouring the
 * peer's SETTINGS_HEADER_TABLE_SIZE, RFC 7541 section 4.2) and splits what is larger than the peer's
 * SETTINGS_MAX_FRAME_SIZE: header blocks into HEADERS and CONTINUATION frames, data into several DATA frames.
 * Frames are gathered in memory and reach the stream in one write at {@link #flush()}, so a caller can put many
 * frames into one TLS record. Thread-safe: each method writes its frames whole and contiguous, under this object's
 * monitor; a caller that needs frames contiguous with a check of its own holds the monitor across both. The
 * socket write itself happens outside the monitor: while one thread writes, others keep adding frames, and the
 * next flush takes all of them in one write (several streams' DATA gathered into one TLS write).
 * <p>
 * {@link #frame} writes any frame as given, unchecked: for test peers that must send what a broken peer sends.
 */
public final class Http2Writer {
    /** Scratch for one frame header, guarded by this object's monitor (every frame is added under it). */
    private final byte[] frameHeader = new byte[9];
    private final OutputStream out;
    /** Frames gathered since the last flush took them; guarded by this object's monitor. */
    private FrameBatch pending = new FrameBatch(16 * 1024);
    /** The buffer the flush in progress writes out; only the flushLock's holder touches it. */
    private FrameBatch spare = new FrameBatch(16 * 1024);
    private final ReentrantLock flushLock = new ReentrantLock();
    private final HpackEncoder hpack = new HpackEncoder();
    private int peerMaxFrameSize = Http2Reader.DEFAULT_MAX_FRAME_SIZE;
    /** Set by {@link #lastGoAway}: every frame added later is dropped. Guarded by this object's monitor. */
    private boolean ended;

    /** @param out the connection's bytes */
    public Http2Writer(OutputStream out) {
        this.out = out;
    }

    /** The client connection preface (RFC 9113 section 3.4), before the client's first SETTINGS. */
    public synchronized void clientPreface() {
        pending.write(Http2Reader.CLIENT_PREFACE, 0, Http2Reader.CLIENT_PREFACE.length);
    }

    /**
     * The peer's SETTINGS, once received: SETTINGS_MAX_FRAME_SIZE bounds the frames written from now on,
     * SETTINGS_HEADER_TABLE_SIZE the encoder's dynamic table (announced in the next header block).
     */
    public synchronized void applyPeerSettings(Map<Integer, Long> settings) {
        Long maxFrame = settings.get(Http2.SETTINGS_MAX_FRAME_SIZE);
        if (maxFrame != null) {
            peerMaxFrameSize = Math.toIntExact(maxFrame);
        }
        Long tableSize = settings.get(Http2.SETTINGS_HEADER_TABLE_SIZE);
        if (tableSize != null) {
            hpack.peerTableSize(tableSize);
        }
    }

    /** SETTINGS with these values (identifier to value), in iteration order. */
    public synchronized void settings(Map<Integer, Long> settings) {
        ByteBuffer b = ByteBuffer.allocate(settings.size() * 6);
        settings.forEach((id, value) -> b.putShort((short) (int) id).putInt((int) (long) value));
        put(Http2.TYPE_SETTINGS, 0, 0, b.array(), 0, b.capacity());
    }

    public synchronized void settingsAck() {
        put(Http2.TYPE_SETTINGS, Http2.FLAG_ACK, 0, new byte[0], 0, 0);
    }

    public synchronized void ping(boolean ack, long payload) {
        put(Http2.TYPE_PING, ack ? Http2.FLAG_ACK : 0, 0, ByteBuffer.allocate(8).putLong(payload).array(), 0, 8);
    }

    public synchronized void goAway(int lastStreamId, int errorCode, byte[] debugData) {
        ByteBuffer b = ByteBuffer.allocate(8 + debugData.length).putInt(lastStreamId).putInt(errorCode).put(debugData);
        put(Http2.TYPE_GOAWAY, 0, 0, b.array(), 0, b.capacity());
    }

    /**
     * A GOAWAY that is the last frame this writer writes: every frame added after it is dropped (RFC 9113 section
     * 6.8 lets frames follow a GOAWAY, but a peer whose state machine a GOAWAY it receives closes, as Python's
     * {@code h2}'s does, takes any later frame for a protocol error). A second call adds nothing.
     */
    public synchronized void lastGoAway(int lastStreamId, int errorCode, byte[] debugData) {
        if (!ended) {
            goAway(lastStreamId, errorCode, debugData);
            ended = true;
        }
    }

    /** @return whether {@link #lastGoAway} was added: later frames are dropped */
    public synchronized boolean ended() {
        return ended;
    }

    public synchronized void rstStream(int streamId, int errorCode) {
        put(Http2.TYPE_RST_STREAM, 0, streamId, ByteBuffer.allocate(4).putInt(errorCode).array(), 0, 4);
    }

    public synchronized void windowUpdate(int streamId, int increment) {
        put(Http2.TYPE_WINDOW_UPDATE, 0, streamId, ByteBuffer.allocate(4).putInt(increment).array(), 0, 4);
    }

    /**
     * A header block: HEADERS, then CONTINUATION frames when the encoded block exceeds the peer's maximum frame size;
     * END_HEADERS on the last, END_STREAM on the HEADERS.
     */
    public synchronized void headers(int streamId, boolean endStream, List<HeaderField> fields) {
        if (ended) {
            return; // not encoded either: the encoder's table stays as the peer's decoder has it
        }
        byte[] block = hpack.encode(fields);
        int first = Math.min(block.length, peerMaxFrameSize);
        boolean whole = first == block.length;
        put(Http2.TYPE_HEADERS, (endStream ? Http2.FLAG_END_STREAM : 0) | (whole ? Http2.FLAG_END_HEADERS : 0), streamId, block, 0, first);
        for (int off = first; off < block.length; off += peerMaxFrameSize) {
            int n = Math.min(peerMaxFrameSize, block.length - off);
            put(Http2.TYPE_CONTINUATION, off + n == block.length ? Http2.FLAG_END_HEADERS : 0, streamId, block, off, n);
        }
    }

    /** Data as DATA frames of at most the peer's maximum frame size; END_STREAM on the last (an empty one if none). */
    public synchronized void data(int streamId, boolean endStream, byte[] bytes, int offset, int length) {
        data(streamId, endStream, ByteBuffer.wrap(bytes, offset, length), length);
    }

    /**
     * Data from a buffer, split as {@link #data(int, boolean, byte[], int, int)} says: {@code length} bytes from the
     * buffer's position on, copied straight into the next write (a direct buffer needs no array of its own first);
     * the position moves past them.
     */
    public synchronized void data(int streamId, boolean endStream, ByteBuffer bytes, int length) {
        if (length < 0 || length > bytes.remaining()) {
            throw new IndexOutOfBoundsException("length " + length + " of " + bytes.remaining() + " remaining");
        }
        int remaining = length;
        do {
            int n = Math.min(peerMaxFrameSize, remaining);
            remaining -= n;
            if (header(Http2.TYPE_DATA, endStream && remaining == 0 ? Http2.FLAG_END_STREAM : 0, streamId, n)) {
                pending.write(bytes, n);
            } else {
                bytes.position(bytes.position() + n);
            }
        } while (remaining > 0);
    }

    /** Any frame, exactly as given: no checks, no splitting (test peers sending what a broken peer sends). */
    public synchronized void frame(int type, int flags, int streamId, byte[] payload) {
        put(type, flags, streamId, payload, 0, payload.length);
    }

    /**
     * Writes everything gathered so far in one write, and flushes the stream. When it returns, every frame added
     * before the call is on the stream (written by this call or by a flush before it). Not to be called while
     * holding this object's monitor: a flush in progress needs it to hand over the next batch.
     */
    public void flush() throws IOException {
        if (Thread.holdsLock(this)) {
            throw new IllegalStateException("flush() inside the writer's monitor");
        }
        flushLock.lock();
        try {
            FrameBatch batch;
            synchronized (this) {
                if (pending.size() == 0) {
                    return; // an earlier flush took this caller's frames
                }
                batch = pending;
                pending = spare;
                spare = batch;
            }
            try {
                batch.writeTo(out);
                out.flush();
            } finally {
                batch.reset();
            }
        } finally {
            flushLock.unlock();
        }
    }

    private void put(int type, int flags, int streamId, byte[] payload, int offset, int length) {
        if (header(type, flags, streamId, length)) {
            pending.write(payload, offset, length);
        }
    }

    /** A frame's header, unless {@link #lastGoAway} ended this writer: @return whether its payload may follow */
    private boolean header(int type, int flags, int streamId, int length) {
        if (ended) {
            return false;
        }
        byte[] h = frameHeader;
        h[0] = (byte) (length >>> 16);
        h[1] = (byte) (length >>> 8);
        h[2] = (byte) length;
        h[3] = (byte) type;
        h[4] = (byte) flags;
        h[5] = (byte) ((streamId >>> 24) & 0x7F);
        h[6] = (byte) (streamId >>> 16);
        h[7] = (byte) (streamId >>> 8);
        h[8] = (byte) streamId;
        pending.write(h, 0, 9);
        return true;
    }
}
