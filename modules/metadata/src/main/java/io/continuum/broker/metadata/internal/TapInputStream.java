package io.continuum.broker.metadata.internal;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * The response stream as the JSON parser reads it, with a short memory of the bytes just delivered so
 * that one channel value can be captured as raw JSON text, but never more than a fixed limit of it
 * (R-META 4: a channel value stops being buffered past 64 KiB).
 * <p>
 * Jackson reads ahead (8,000 bytes per read): when the parser reports that a channel value starts at
 * byte offset {@code S}, the stream has already delivered bytes past {@code S}. The ring of recently
 * delivered bytes (larger than any read-ahead) lets the capture start at {@code S}.
 * <p>
 * Capturing is lazy: a value usually ends inside the ring (the common value is a few hundred bytes),
 * and is then copied once, in bulk, when the capture ends. Only bytes of the value that the ring is
 * about to overwrite are spilled into the capture buffer first, and never more than the limit of
 * them. (Copying the read-ahead byte by byte at every capture start was a third of the sync's CPU
 * time, docs/metadata.md "Benchmark".) Not thread-safe.
 */
final class TapInputStream extends InputStream {
    private static final int RING_SIZE = 1 << 15;
    private static final int RING_MASK = RING_SIZE - 1;

    private final InputStream in;
    private final byte[] ring = new byte[RING_SIZE];
    /** Absolute offset of the next byte delivered. */
    private long position;

    private boolean capturing;
    /** Absolute offset where the capture starts. */
    private long captureFrom;
    private int captureLimit;
    /** Bytes {@code [captureFrom, captureFrom + spilled)} are in {@code capture}; the rest is in the ring. */
    private int spilled;
    private byte[] capture = new byte[0];

    TapInputStream(InputStream in) {
        this.in = in;
    }

    @Override
    public int read() throws IOException {
        int b = in.read();
        if (b >= 0) {
            record(new byte[] {(byte) b}, 0, 1);
        }
        return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        int n = in.read(b, off, len);
        if (n > 0) {
            record(b, off, n);
        }
        return n;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    /**
     * Starts capturing the bytes from absolute offset {@code from} (already delivered or not), keeping
     * at most {@code limit} of them.
     */
    void startCapture(long from, int limit) {
        long back = position - from;
        if (back < 0 || back > RING_SIZE) {
            throw new IllegalStateException("capture start outside the read-ahead window");
        }
        capturing = true;
        captureFrom = from;
        captureLimit = limit;
        spilled = 0;
    }

    /**
     * Stops capturing and returns the first {@code length} captured bytes, or null when more than the
     * limit was asked for (the value was too large and was never buffered past the limit).
     */
    byte[] endCapture(long length) {
        capturing = false;
        if (length > captureLimit || captureFrom + length > position) {
            return null;
        }
        byte[] out = new byte[(int) length];
        int fromCapture = (int) Math.min(length, spilled);
        System.arraycopy(capture, 0, out, 0, fromCapture);
        copyFromRing(captureFrom + fromCapture, out, fromCapture, (int) length - fromCapture);
        return out;
    }

    private void record(byte[] b, int off, int n) {
        if (capturing) {
            spillBeforeOverwrite(b, off, n);
        }
        // Only the last RING_SIZE bytes can matter; write them in at most two pieces.
        int skip = Math.max(0, n - RING_SIZE);
        long at = position + skip;
        int left = n - skip;
        int src = off + skip;
        while (left > 0) {
            int index = (int) (at & RING_MASK);
            int chunk = Math.min(left, RING_SIZE - index);
            System.arraycopy(b, src, ring, index, chunk);
            at += chunk;
            src += chunk;
            left -= chunk;
        }
        position += n;
    }

    /**
     * Writing {@code n} more bytes overwrites the ring's bytes before {@code position + n - RING_SIZE}:
     * moves the captured ones among them (up to the limit) into the capture buffer first. When the
     * ring must be spilled, the new bytes are spilled too, so that the capture stays contiguous.
     */
    private void spillBeforeOverwrite(byte[] b, int off, int n) {
        long pending = captureFrom + spilled;
        long end = captureFrom + captureLimit;
        if (pending >= end || position + n - RING_SIZE <= pending) {
            return; // the limit is reached, or nothing pending is about to be overwritten
        }
        int fromRing = (int) (Math.min(position, end) - pending);
        ensureCapacity(spilled + fromRing);
        copyFromRing(pending, capture, spilled, fromRing);
        spilled += fromRing;
        int fromNew = (int) Math.max(0, Math.min(n, end - position));
        ensureCapacity(spilled + fromNew);
        System.arraycopy(b, off, capture, spilled, fromNew);
        spilled += fromNew;
    }

    private void copyFromRing(long from, byte[] dst, int dstOff, int length) {
        long at = from;
        int done = 0;
        while (done < length) {
            int index = (int) (at & RING_MASK);
            int chunk = Math.min(length - done, RING_SIZE - index);
            System.arraycopy(ring, index, dst, dstOff + done, chunk);
            at += chunk;
            done += chunk;
        }
    }

    private void ensureCapacity(int needed) {
        if (needed > capture.length) {
            capture = Arrays.copyOf(capture, Math.min(captureLimit, Math.max(needed, Math.max(1024, capture.length * 2))));
        }
    }
}
