package io.continuum.broker.relay.transport;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataWriter;

/**
 * The only way bytes reach the socket. Helidon's connection writer hands it one complete frame per
 * {@code writeNow} (pinned by a test); the transport's own frames (DATA, WINDOW_UPDATE, PING) go through
 * {@link #writeOwnFrame}. One lock serialises both, so frames never interleave, and a header block split into
 * HEADERS + CONTINUATION keeps the lock until END_HEADERS.
 *
 * <p>Helidon's own WINDOW_UPDATE frames are dropped (pitfall 1: it drops those of older streams itself, and it
 * would replenish on read rather than when the application has written the bytes onward): the transport sends
 * its own from {@link BusStream#release(int)}.
 */
final class SerializedFrameWriter implements DataWriter {
    private final OutputStream out;
    private final Consumer<IOException> onFailure;
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicLong droppedWindowUpdates = new AtomicLong();
    private final AtomicLong helidonFrames = new AtomicLong();
    private volatile boolean dead;
    private boolean prefaceSeen;
    private boolean inHeaderBlock;
    /** Guarded by lock: where frames are assembled before their socket write. */
    private byte[] scratch = new byte[Frames.HEADER_LENGTH + Frames.MAX_FRAME_PAYLOAD];

    SerializedFrameWriter(OutputStream out, Consumer<IOException> onFailure) {
        this.out = out;
        this.onFailure = onFailure;
    }

    @Override
    public void write(BufferData... buffers) {
        writeNow(buffers);
    }

    @Override
    public void write(BufferData buffer) {
        writeNow(buffer);
    }

    @Override
    public void writeNow(BufferData... buffers) {
        int total = 0;
        for (BufferData b : buffers) {
            total += b.available();
        }
        byte[] joined = new byte[total];
        int offset = 0;
        for (BufferData b : buffers) {
            offset += b.read(joined, offset, b.available());
        }
        writeFromHelidon(joined);
    }

    @Override
    public void writeNow(BufferData buffer) {
        byte[] bytes = new byte[buffer.available()];
        buffer.read(bytes);
        writeFromHelidon(bytes);
    }

    @Override
    public void flush() {
    }

    /**
     * Writes one complete frame produced by the transport itself.
     *
     * @param frame header and payload
     * @throws UncheckedIOException when the socket write fails
     */
    void writeOwnFrame(byte[] frame) {
        writeOwnFrame(frame, null, 0, 0);
    }

    /**
     * Writes a frame header followed by a slice of payload as one socket write.
     */
    void writeOwnFrame(byte[] header, byte[] payload, int offset, int length) {
        byte[] frame;
        if (payload == null) {
            frame = header;
        } else {
            frame = new byte[header.length + length];
            System.arraycopy(header, 0, frame, 0, header.length);
            System.arraycopy(payload, offset, frame, header.length, length);
        }
        lock.lock();
        try {
            send(frame);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes a transport frame unless {@code skip} says so when checked under the writer's lock (so a DATA frame
     * can never follow the stream's own RST_STREAM on the wire).
     *
     * @return false if skipped
     */
    boolean writeOwnFrameUnless(java.util.function.BooleanSupplier skip, byte[] header, byte[] payload, int offset,
                                int length) {
        lock.lock();
        try {
            if (skip.getAsBoolean()) {
                return false;
            }
            if (length == 0) {
                send(header, header.length);
            } else {
                byte[] frame = scratch(header.length + length);
                System.arraycopy(header, 0, frame, 0, header.length);
                System.arraycopy(payload, offset, frame, header.length, length);
                send(frame, header.length + length);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes {@code length} bytes of {@code payload} as DATA frames of at most {@code maxFramePayload} bytes each
     * (none with END_STREAM), all in one socket write, unless {@code skip} says so under the writer's lock. The
     * frames are assembled in a buffer this writer reuses: no allocation per frame, and one TLS write (records
     * of up to 16 KiB each) instead of one per frame.
     *
     * @return false if skipped
     */
    boolean writeDataUnless(java.util.function.BooleanSupplier skip, int streamId, byte[] payload, int offset,
                            int length, int maxFramePayload) {
        int frames = (length + maxFramePayload - 1) / maxFramePayload;
        int total = length + frames * Frames.HEADER_LENGTH;
        lock.lock();
        try {
            if (skip.getAsBoolean()) {
                return false;
            }
            byte[] buffer = scratch(total);
            int at = 0;
            int done = 0;
            while (done < length) {
                int n = Math.min(maxFramePayload, length - done);
                Frames.writeHeader(buffer, at, n, Frames.TYPE_DATA, 0, streamId);
                System.arraycopy(payload, offset + done, buffer, at + Frames.HEADER_LENGTH, n);
                at += Frames.HEADER_LENGTH + n;
                done += n;
            }
            send(buffer, total);
            return true;
        } finally {
            lock.unlock();
        }
    }
    /** @return how many WINDOW_UPDATE frames Helidon tried to write and were dropped */
    long droppedWindowUpdates() {
        return droppedWindowUpdates.get();
    }

    /** @return how many frames Helidon wrote through this writer (one per writeNow) */
    long helidonFrames() {
        return helidonFrames.get();
    }

    /** After this, Helidon's writes are dropped silently (so its close path completes) and own writes fail. */
    void markDead() {
        dead = true;
    }

    private void writeFromHelidon(byte[] bytes) {
        if (dead) {
            return;
        }
        lock.lock();
        try {
            if (!prefaceSeen) {
                // the connection preface is the first write and is not a frame
                prefaceSeen = true;
                if (bytes.length >= 3 && bytes[0] == 'P' && bytes[1] == 'R' && bytes[2] == 'I') {
                    send(bytes);
                    return;
                }
            }
            if (bytes.length < Frames.HEADER_LENGTH) {
                throw new IllegalStateException("Helidon wrote a partial frame: the one-frame-per-write assumption broke");
            }
            int declared = ((bytes[0] & 0xFF) << 16) | ((bytes[1] & 0xFF) << 8) | (bytes[2] & 0xFF);
            if (declared != bytes.length - Frames.HEADER_LENGTH) {
                throw new IllegalStateException("Helidon wrote other than one frame: the one-frame-per-write assumption broke");
            }
            helidonFrames.incrementAndGet();
            int type = bytes[3] & 0xFF;
            int flags = bytes[4] & 0xFF;
            if (type == Frames.TYPE_WINDOW_UPDATE) {
                droppedWindowUpdates.incrementAndGet();
                return;
            }
            send(bytes);
            if (type == Frames.TYPE_HEADERS && (flags & Frames.FLAG_END_HEADERS) == 0 && !inHeaderBlock) {
                inHeaderBlock = true;
                lock.lock(); // keep other frames out until the CONTINUATION with END_HEADERS
            } else if (type == Frames.TYPE_CONTINUATION && (flags & Frames.FLAG_END_HEADERS) != 0 && inHeaderBlock) {
                inHeaderBlock = false;
                lock.unlock();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Lock held: the reusable frame assembly buffer, at least {@code size} bytes. */
    private byte[] scratch(int size) {
        if (scratch.length < size) {
            scratch = new byte[Math.max(size, scratch.length * 2)];
        }
        return scratch;
    }

    private void send(byte[] bytes) {
        send(bytes, bytes.length);
    }

    private void send(byte[] bytes, int length) {
        if (dead) {
            throw new UncheckedIOException(new IOException("bus connection is closed"));
        }
        try {
            out.write(bytes, 0, length);
            out.flush();
        } catch (IOException e) {
            onFailure.accept(e);
            throw new UncheckedIOException("bus connection write failed", e);
        }
    }
}
