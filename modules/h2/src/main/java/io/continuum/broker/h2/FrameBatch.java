package io.continuum.broker.h2;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The frames {@link Http2Writer} gathers between two flushes: one growing array, written out in one call. Not
 * {@link java.io.ByteArrayOutputStream}, which takes its own lock on every write (the writer's monitor already
 * guards each batch) and cannot take a {@link ByteBuffer}: a publisher's bytes arrive in a direct buffer, and
 * copying them straight in saves the array per read that the stream would otherwise need. Not thread-safe.
 */
final class FrameBatch {
    private byte[] bytes;
    private int size;

    FrameBatch(int initialCapacity) {
        bytes = new byte[initialCapacity];
    }

    int size() {
        return size;
    }

    void write(byte[] src, int offset, int length) {
        ensureRoom(length);
        System.arraycopy(src, offset, bytes, size, length);
        size += length;
    }

    /** Copies {@code length} bytes from {@code src}'s position on, and moves that position past them. */
    void write(ByteBuffer src, int length) {
        ensureRoom(length);
        src.get(bytes, size, length);
        size += length;
    }

    void writeTo(OutputStream out) throws IOException {
        out.write(bytes, 0, size);
    }

    void reset() {
        size = 0;
    }

    private void ensureRoom(int length) {
        int needed = size + length;
        if (needed > bytes.length) {
            // doubling, as ByteArrayOutputStream does: the batch settles at the largest one seen and stays there
            bytes = Arrays.copyOf(bytes, Math.max(needed, Math.min(Integer.MAX_VALUE - 8, 2 * bytes.length)));
        }
    }
}
