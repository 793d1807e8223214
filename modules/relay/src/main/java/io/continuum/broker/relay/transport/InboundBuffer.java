package io.continuum.broker.relay.transport;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * One stream's router-to-publisher bytes, held as bytes, not as frames (R-BUF 5): DATA payloads are copied into
 * 16 KiB segments back to back, so a million one-byte frames cost what 1 MB does, never an object each. What it
 * holds is bounded by the stream's receive window (the connection checks every frame against it) plus one segment.
 * A stream with nothing buffered holds no segment.
 * <p>
 * {@link #take} hands out a view of the oldest contiguous bytes; the consumer is done with it by its next call
 * (one reader at a time, {@link Http2BusStream#read}), and the view's bytes are never written again: appends go
 * only past them, and a segment is dropped, never reused. Guarded by the connection's lock.
 */
final class InboundBuffer {
    /** The largest DATA payload under the default SETTINGS_MAX_FRAME_SIZE: a 16 KiB frame is one copy. */
    static final int SEGMENT_BYTES = 16_384;

    private final ArrayDeque<byte[]> segments = new ArrayDeque<>();
    /** Read position in the first segment, write position in the last. */
    private int readPosition;
    private int writePosition;
    private int size;

    /** Copies the frame's bytes in. */
    void append(ByteBuffer data) {
        while (data.hasRemaining()) {
            byte[] last = segments.peekLast();
            if (last == null || writePosition == last.length) {
                last = new byte[SEGMENT_BYTES];
                segments.addLast(last);
                writePosition = 0;
            }
            int n = Math.min(data.remaining(), last.length - writePosition);
            data.get(last, writePosition, n);
            writePosition += n;
            size += n;
        }
    }

    /** @return the bytes held */
    int size() {
        return size;
    }

    /** @return the segments held (a test seam: what a flood of small frames costs is objects, see ConnectionProbe) */
    int segments() {
        return segments.size();
    }

    /**
     * @return a view of the oldest contiguous bytes (all of the first segment that is filled), or null when empty;
     *         the consumer is done with it by its next call
     */
    ByteBuffer take() {
        if (size == 0) {
            // the last view is done with: an idle stream keeps no segment
            segments.clear();
            readPosition = 0;
            writePosition = 0;
            return null;
        }
        byte[] first = segments.peekFirst();
        int end = first == segments.peekLast() ? writePosition : first.length;
        ByteBuffer view = ByteBuffer.wrap(first, readPosition, end - readPosition);
        size -= end - readPosition;
        readPosition = end;
        if (readPosition == first.length) {
            segments.pollFirst(); // the view keeps it alive until the consumer is done
            readPosition = 0;
        }
        return view;
    }

    /** Drops everything (a reset: nobody will read it). */
    void clear() {
        segments.clear();
        readPosition = 0;
        writePosition = 0;
        size = 0;
    }
}
