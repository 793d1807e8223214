package io.continuum.broker.relay.transport;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Follows the inbound HTTP/2 byte stream (server to client) frame by frame, without copying DATA or header
 * payloads, and reports what the transport must know but Helidon's client does not expose:
 * SETTINGS values, WINDOW_UPDATE increments, PING acknowledgements, GOAWAY, RST_STREAM, and per-stream DATA
 * lengths and END_STREAM. Events fire when a frame's last byte has been seen. Not thread-safe: fed only by the
 * connection's single reader thread.
 *
 * <p>It is also the one place that can keep a frame from Helidon: a DATA frame the listener does not
 * {@linkplain Listener#admitData admit} is dropped whole. Helidon 4.5.0's client takes a response body before the
 * response's HEADERS (RFC 9113 section 8.1), or DATA after END_STREAM on a stream its reader has not finished
 * with, for a connection error, where the RFC asks for a stream error or lets the frame be ignored. To decide
 * before Helidon sees any byte of a frame, a frame header cut by the end of a read is held back until its ninth
 * byte arrives.
 */
final class InboundFrameSniffer {
    /** Receives one call per complete frame of interest. */
    interface Listener {
        /** @param settings (identifier, value) pairs of one non-ACK SETTINGS frame */
        void settings(List<long[]> settings);

        void windowUpdate(int streamId, int increment);

        void pingAck(long opaque);

        void goAway(int lastStreamId, long errorCode);

        void rstStream(int streamId, long errorCode);

        /** @param length the full payload length (padding included: it counts against flow control) */
        void data(int streamId, int length, boolean endStream);

        /** A complete header block (END_HEADERS seen). */
        void headers(int streamId, boolean endStream);

        /**
         * Called when a DATA frame's header is complete, before any of its bytes reach Helidon.
         *
         * @return false to drop the whole frame: Helidon never sees it, and {@link #dataDropped} replaces
         *         {@link #data} once its last byte has passed
         */
        boolean admitData(int streamId);

        /** A dropped DATA frame has passed: its bytes still count against the connection's receive window. */
        void dataDropped(int streamId, int length);
    }

    private static final int MAX_COLLECTED = 16_384;
    private static final byte[] NOTHING = new byte[0];

    private final Listener listener;
    private final byte[] header = new byte[Http2Frames.HEADER_LENGTH];
    private int headerFill;
    private int length;
    private int type;
    private int flags;
    private int streamId;
    private int payloadSeen;
    private byte[] collected;
    private boolean headerBlockEndStream;
    /** Between a HEADERS without END_HEADERS and its last CONTINUATION: nothing may come between (RFC 9113 6.10). */
    private boolean headerBlockOpen;
    private boolean dropping;

    // one filter() call's output: the input's bytes from runStart on pass through unless a frame is dropped or held
    private byte[] out;
    private int outFill;
    private int runStart;

    InboundFrameSniffer(Listener listener) {
        this.listener = listener;
    }

    /**
     * @param buffer bytes just read from the socket, in order: {@code buffer[0, length)}
     * @return what Helidon may read: the same bytes in order, less dropped frames, less a frame header cut by the
     *         end of this read (it leads a later call's result instead); possibly empty, never {@code buffer}
     */
    byte[] filter(byte[] buffer, int length) {
        // The usual read, whole frames with none dropped, is one run: one copy, as before there was a filter.
        out = new byte[headerFill + length];
        outFill = 0;
        runStart = dropping ? -1 : 0; // a dropped frame's payload may go on from the last read
        int frameStart = -1; // where in this read the current frame began; -1: in an earlier read
        int offset = 0;
        while (offset < length) {
            if (headerFill < Http2Frames.HEADER_LENGTH) {
                if (headerFill == 0) {
                    frameStart = offset;
                }
                int n = Math.min(Http2Frames.HEADER_LENGTH - headerFill, length - offset);
                System.arraycopy(buffer, offset, header, headerFill, n);
                headerFill += n;
                offset += n;
                if (headerFill == Http2Frames.HEADER_LENGTH) {
                    startFrame();
                    if (dropping) {
                        flushRun(buffer, frameStart < 0 ? 0 : frameStart);
                        runStart = -1;
                    } else if (frameStart < 0) {
                        // the header began in an earlier read and was held back: it goes out now, whole
                        System.arraycopy(header, 0, out, outFill, Http2Frames.HEADER_LENGTH);
                        outFill += Http2Frames.HEADER_LENGTH;
                        runStart = offset;
                    }
                    if (this.length == 0) {
                        endFrame(offset);
                    }
                }
                continue;
            }
            int n = Math.min(this.length - payloadSeen, length - offset);
            if (collected != null) {
                int room = Math.min(n, collected.length - payloadSeen);
                if (room > 0) {
                    System.arraycopy(buffer, offset, collected, payloadSeen, room);
                }
            }
            payloadSeen += n;
            offset += n;
            if (payloadSeen == this.length) {
                endFrame(offset);
            }
        }
        if (headerFill > 0 && headerFill < Http2Frames.HEADER_LENGTH) {
            // held back: the header's bytes wait in header[] until the rest arrives
            flushRun(buffer, frameStart < 0 ? 0 : frameStart);
        } else if (runStart >= 0) {
            flushRun(buffer, length);
        }
        byte[] result = outFill == out.length ? out : outFill == 0 ? NOTHING : Arrays.copyOf(out, outFill);
        out = null;
        return result;
    }

    /** Passes the input's bytes from the run's start to {@code end}, if a run is open ({@code runStart >= 0}). */
    private void flushRun(byte[] buffer, int end) {
        if (runStart >= 0 && end > runStart) {
            System.arraycopy(buffer, runStart, out, outFill, end - runStart);
            outFill += end - runStart;
        }
        runStart = end;
    }

    private void startFrame() {
        length = ((header[0] & 0xFF) << 16) | ((header[1] & 0xFF) << 8) | (header[2] & 0xFF);
        type = header[3] & 0xFF;
        flags = header[4] & 0xFF;
        streamId = Http2Frames.getInt(header, 5) & 0x7FFF_FFFF;
        payloadSeen = 0;
        boolean collect = switch (type) {
            case Http2Frames.TYPE_SETTINGS, Http2Frames.TYPE_WINDOW_UPDATE, Http2Frames.TYPE_PING, Http2Frames.TYPE_GOAWAY,
                 Http2Frames.TYPE_RST_STREAM -> true;
            default -> false;
        };
        collected = collect ? new byte[Math.min(length, MAX_COLLECTED)] : null;
        // Only a DATA frame that HTTP/2 lets a stream error answer is the listener's to refuse: one on stream 0,
        // or one inside an open header block, is a connection error that Helidon reports as such.
        dropping = type == Http2Frames.TYPE_DATA && streamId != 0 && !headerBlockOpen && !listener.admitData(streamId);
    }

    /** The frame's last byte is just before {@code offset} in the current read. */
    private void endFrame(int offset) {
        headerFill = 0;
        byte[] payload = collected;
        collected = null;
        if (dropping) {
            dropping = false;
            runStart = offset;
            listener.dataDropped(streamId, length);
            return;
        }
        switch (type) {
            case Http2Frames.TYPE_DATA -> listener.data(streamId, length, (flags & Http2Frames.FLAG_END_STREAM) != 0);
            case Http2Frames.TYPE_HEADERS -> {
                headerBlockEndStream = (flags & Http2Frames.FLAG_END_STREAM) != 0;
                headerBlockOpen = (flags & Http2Frames.FLAG_END_HEADERS) == 0;
                if (!headerBlockOpen) {
                    listener.headers(streamId, headerBlockEndStream);
                }
            }
            case Http2Frames.TYPE_CONTINUATION -> {
                if ((flags & Http2Frames.FLAG_END_HEADERS) != 0) {
                    headerBlockOpen = false;
                    listener.headers(streamId, headerBlockEndStream);
                }
            }
            case Http2Frames.TYPE_SETTINGS -> {
                if ((flags & Http2Frames.FLAG_ACK) == 0 && payload.length % 6 == 0) {
                    List<long[]> settings = new ArrayList<>(payload.length / 6);
                    for (int i = 0; i + 6 <= payload.length; i += 6) {
                        int id = ((payload[i] & 0xFF) << 8) | (payload[i + 1] & 0xFF);
                        long value = Http2Frames.getInt(payload, i + 2) & 0xFFFF_FFFFL;
                        settings.add(new long[] {id, value});
                    }
                    listener.settings(settings);
                }
            }
            case Http2Frames.TYPE_WINDOW_UPDATE -> {
                if (payload.length == 4) {
                    listener.windowUpdate(streamId, Http2Frames.getInt(payload, 0) & 0x7FFF_FFFF);
                }
            }
            case Http2Frames.TYPE_PING -> {
                if ((flags & Http2Frames.FLAG_ACK) != 0 && payload.length == 8) {
                    long opaque = ((long) Http2Frames.getInt(payload, 0) << 32) | (Http2Frames.getInt(payload, 4) & 0xFFFF_FFFFL);
                    listener.pingAck(opaque);
                }
            }
            case Http2Frames.TYPE_GOAWAY -> {
                if (payload.length >= 8) {
                    listener.goAway(Http2Frames.getInt(payload, 0) & 0x7FFF_FFFF, Http2Frames.getInt(payload, 4) & 0xFFFF_FFFFL);
                }
            }
            case Http2Frames.TYPE_RST_STREAM -> {
                if (payload.length == 4) {
                    listener.rstStream(streamId, Http2Frames.getInt(payload, 0) & 0xFFFF_FFFFL);
                }
            }
            default -> {
                // PRIORITY, PUSH_PROMISE (disabled), unknown extension frames: nothing to learn
            }
        }
    }
}
