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
 * delivered bytes (larger than any read-ahead) lets the capture start at {@code S}. Not thread-safe.
 */
final class TapInputStream extends InputStream {
    private static final int RING_SIZE = 1 << 15;
    private static final int RING_MASK = RING_SIZE - 1;

    private final InputStream in;
    private final byte[] ring = new byte[RING_SIZE];
    private long position;

    private boolean capturing;
    private byte[] capture = new byte[0];
    private int captureLength;
    private int captureLimit;

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
        captureLimit = limit;
        captureLength = 0;
        for (long p = from; p < position && captureLength < limit; p++) {
            append(ring[(int) (p & RING_MASK)]);
        }
    }

    /**
     * Stops capturing and returns the first {@code length} captured bytes, or null when more than the
     * limit was asked for (the value was too large and was never buffered past the limit).
     */
    byte[] endCapture(long length) {
        capturing = false;
        if (length > captureLimit || length > captureLength) {
            captureLength = 0;
            return null;
        }
        byte[] out = Arrays.copyOf(capture, (int) length);
        captureLength = 0;
        return out;
    }

    private void record(byte[] b, int off, int n) {
        for (int i = 0; i < n; i++) {
            ring[(int) ((position + i) & RING_MASK)] = b[off + i];
        }
        if (capturing) {
            int room = captureLimit - captureLength;
            for (int i = 0; i < Math.min(room, n); i++) {
                append(b[off + i]);
            }
        }
        position += n;
    }

    private void append(byte b) {
        if (captureLength == capture.length) {
            capture = Arrays.copyOf(capture, Math.min(captureLimit, Math.max(1024, capture.length * 2)));
        }
        capture[captureLength++] = b;
    }
}
