package io.continuum.broker.relay.transport;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataWriter;

/**
 * The only way bytes reach the socket. Helidon's connection writer hands it one complete frame per
 * {@code writeNow} (pinned by a test); the transport's own frames (DATA, WINDOW_UPDATE, PING) go through
 * {@link #writeOwnFrame}, DATA through {@link #writeDataUnless}, which gathers the DATA of every stream ready at
 * once into one socket write. One lock serialises all of it, so frames never interleave, and a header block split
 * into HEADERS + CONTINUATION keeps the lock until END_HEADERS.
 *
 * <p>Helidon's own WINDOW_UPDATE frames are dropped (Helidon drops those of older streams while a newer one is
 * open, and it would replenish on read rather than when the application has written the bytes onward): the
 * transport sends its own from {@link BusStream#release(int)}.
 */
final class SerializedFrameWriter implements DataWriter {
    /**
     * Most bytes one gathered DATA write assembles: four 64 KiB stream writes, or many small ones. A single write
     * larger than this goes alone. Bounds the assembly buffer (one per connection).
     */
    static final int GATHER_BYTES = 256 * 1024;
    private final OutputStream out;
    private final Consumer<IOException> onFailure;
    private final BooleanSupplier gatherByYielding;
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicLong droppedWindowUpdates = new AtomicLong();
    private final AtomicLong helidonFrames = new AtomicLong();
    private final AtomicLong dataWrites = new AtomicLong();
    /** DATA of streams waiting for the lock, in arrival order (see {@link #writeDataUnless}). */
    private final Queue<PendingData> pending = new ConcurrentLinkedQueue<>();
    /** Guarded by lock: the entries of the socket write being assembled. */
    private final List<PendingData> gathered = new ArrayList<>();
    private volatile boolean dead;
    /**
     * Test seam: runs on a DATA writer's thread once its DATA is queued, before it takes the lock, so a test can
     * make a reset of the stream happen exactly then (a black-box race cannot hit that window).
     */
    volatile Runnable beforeDataLock;
    private boolean prefaceSeen;
    private boolean inHeaderBlock;
    /** Guarded by lock: where frames are assembled before their socket write. */
    private byte[] scratch = new byte[Http2Frames.HEADER_LENGTH + Http2Frames.MAX_FRAME_PAYLOAD];

    /**
     * @param gatherByYielding asked on each DATA write: whether other streams are likely to have DATA ready too
     *                         (several streams open), so the writer yields once before taking the lock
     */
    SerializedFrameWriter(OutputStream out, Consumer<IOException> onFailure, BooleanSupplier gatherByYielding) {
        this.out = out;
        this.onFailure = onFailure;
        this.gatherByYielding = gatherByYielding;
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
    boolean writeOwnFrameUnless(BooleanSupplier skip, byte[] header, byte[] payload, int offset,
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
     * (none with END_STREAM), unless {@code skip} says so under the writer's lock. Returns once the frames are on
     * the socket (or skipped).
     *
     * <p>Streams gather: the call queues its DATA and takes the lock; whoever holds it writes every queued stream's
     * frames, in arrival order, assembled in a buffer this writer reuses, as one socket write (up to
     * {@link #GATHER_BYTES} each). A caller whose DATA another caller already wrote finds it done and returns. So
     * many streams that are ready at once cost one TLS write (and one record per 16 KiB) instead of one each, and a
     * lone stream costs what it did. Each stream has at most one call in flight (its writer lock), so a stream's
     * frames stay in order; {@code skip} is checked for each entry under the lock right before it is assembled.
     *
     * @return false if skipped
     * @throws UncheckedIOException when the socket write that carried these frames failed
     */
    boolean writeDataUnless(BooleanSupplier skip, int streamId, byte[] payload, int offset,
                            int length, int maxFramePayload) {
        PendingData mine = new PendingData(skip, streamId, payload, offset, length, maxFramePayload);
        pending.add(mine);
        Runnable seam = beforeDataLock;
        if (seam != null) {
            seam.run();
        }
        if (gatherByYielding.getAsBoolean() && Thread.currentThread().isVirtual()) {
            // Other streams' writers woken by the same round of the session's readiness loop are runnable behind
            // this one on the carrier; one after the other, each would find the lock free and write alone (a TLS
            // record and a socket write per stream). Yielding lets them queue their DATA first, so the one socket
            // write below carries them all. A lone stream does not yield: nothing would join it.
            Thread.yield();
        }
        lock.lock();
        try {
            while (!mine.done) {
                writeGatheredLocked();
            }
            if (mine.failure != null) {
                throw mine.failure;
            }
            return mine.written;
        } finally {
            lock.unlock();
        }
    }

    /** Lock held: one socket write of the DATA queued first, as much as fits in {@link #GATHER_BYTES}. */
    private void writeGatheredLocked() {
        int total = 0;
        PendingData p;
        while ((p = pending.peek()) != null) {
            int size = p.wireLength();
            if (!gathered.isEmpty() && total + size > GATHER_BYTES) {
                break;
            }
            pending.poll();
            if (p.skip.getAsBoolean()) {
                p.done = true;
                continue;
            }
            byte[] buffer = scratch(total + size);
            int done = 0;
            while (done < p.length) {
                int n = Math.min(p.maxFramePayload, p.length - done);
                Http2Frames.writeHeader(buffer, total, n, Http2Frames.TYPE_DATA, 0, p.streamId);
                System.arraycopy(p.payload, p.offset + done, buffer, total + Http2Frames.HEADER_LENGTH, n);
                total += Http2Frames.HEADER_LENGTH + n;
                done += n;
            }
            gathered.add(p);
        }
        if (gathered.isEmpty()) {
            return;
        }
        UncheckedIOException failure = null;
        try {
            send(scratch, total);
            dataWrites.incrementAndGet();
        } catch (UncheckedIOException e) {
            failure = e;
        }
        for (PendingData q : gathered) {
            q.written = failure == null;
            q.failure = failure;
            q.done = true;
        }
        gathered.clear();
    }

    /** One stream's DATA waiting for the writer lock. Fields after construction are guarded by the lock. */
    private static final class PendingData {
        final BooleanSupplier skip;
        final int streamId;
        final byte[] payload;
        final int offset;
        final int length;
        final int maxFramePayload;
        boolean done;
        boolean written;
        UncheckedIOException failure;

        PendingData(BooleanSupplier skip, int streamId, byte[] payload, int offset, int length,
                    int maxFramePayload) {
            this.skip = skip;
            this.streamId = streamId;
            this.payload = payload;
            this.offset = offset;
            this.length = length;
            this.maxFramePayload = maxFramePayload;
        }

        int wireLength() {
            int frames = (length + maxFramePayload - 1) / maxFramePayload;
            return length + frames * Http2Frames.HEADER_LENGTH;
        }
    }

    /** @return DATA writes queued behind the writer's lock right now (for tests) */
    int pendingData() {
        return pending.size();
    }

    /** @return socket writes that carried DATA (several streams' frames can share one) */
    long dataWrites() {
        return dataWrites.get();
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
            if (bytes.length < Http2Frames.HEADER_LENGTH) {
                throw new IllegalStateException("Helidon wrote a partial frame: the one-frame-per-write assumption broke");
            }
            int declared = ((bytes[0] & 0xFF) << 16) | ((bytes[1] & 0xFF) << 8) | (bytes[2] & 0xFF);
            if (declared != bytes.length - Http2Frames.HEADER_LENGTH) {
                throw new IllegalStateException("Helidon wrote other than one frame: the one-frame-per-write assumption broke");
            }
            helidonFrames.incrementAndGet();
            int type = bytes[3] & 0xFF;
            int flags = bytes[4] & 0xFF;
            if (type == Http2Frames.TYPE_WINDOW_UPDATE) {
                droppedWindowUpdates.incrementAndGet();
                return;
            }
            send(bytes);
            if (type == Http2Frames.TYPE_HEADERS && (flags & Http2Frames.FLAG_END_HEADERS) == 0 && !inHeaderBlock) {
                inHeaderBlock = true;
                lock.lock(); // keep other frames out until the CONTINUATION with END_HEADERS
            } else if (type == Http2Frames.TYPE_CONTINUATION && (flags & Http2Frames.FLAG_END_HEADERS) != 0 && inHeaderBlock) {
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
            // keeps what is assembled so far: a gathered write grows the buffer between two streams' frames
            scratch = Arrays.copyOf(scratch, Math.max(size, scratch.length * 2));
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
