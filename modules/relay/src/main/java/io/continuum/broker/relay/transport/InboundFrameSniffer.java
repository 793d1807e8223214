package io.continuum.broker.relay.transport;

import java.util.ArrayList;
import java.util.List;

/**
 * Follows the inbound HTTP/2 byte stream (server to client) frame by frame, without copying DATA or header
 * payloads, and reports what the transport must know but Helidon's client does not expose:
 * SETTINGS values, WINDOW_UPDATE increments, PING acknowledgements, GOAWAY, RST_STREAM, and per-stream DATA
 * lengths and END_STREAM. Events fire when a frame's last byte has been seen. Not thread-safe: fed only by the
 * connection's single reader thread.
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
    }

    private static final int MAX_COLLECTED = 16_384;

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

    InboundFrameSniffer(Listener listener) {
        this.listener = listener;
    }

    /**
     * @param bytes a chunk just read from the socket, in order
     */
    void accept(byte[] bytes) {
        int offset = 0;
        while (offset < bytes.length) {
            if (headerFill < Http2Frames.HEADER_LENGTH) {
                int n = Math.min(Http2Frames.HEADER_LENGTH - headerFill, bytes.length - offset);
                System.arraycopy(bytes, offset, header, headerFill, n);
                headerFill += n;
                offset += n;
                if (headerFill == Http2Frames.HEADER_LENGTH) {
                    startFrame();
                    if (length == 0) {
                        endFrame();
                    }
                }
                continue;
            }
            int n = Math.min(length - payloadSeen, bytes.length - offset);
            if (collected != null) {
                int room = Math.min(n, collected.length - payloadSeen);
                if (room > 0) {
                    System.arraycopy(bytes, offset, collected, payloadSeen, room);
                }
            }
            payloadSeen += n;
            offset += n;
            if (payloadSeen == length) {
                endFrame();
            }
        }
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
    }

    private void endFrame() {
        headerFill = 0;
        byte[] payload = collected;
        collected = null;
        switch (type) {
            case Http2Frames.TYPE_DATA -> listener.data(streamId, length, (flags & Http2Frames.FLAG_END_STREAM) != 0);
            case Http2Frames.TYPE_HEADERS -> {
                headerBlockEndStream = (flags & Http2Frames.FLAG_END_STREAM) != 0;
                if ((flags & Http2Frames.FLAG_END_HEADERS) != 0) {
                    listener.headers(streamId, headerBlockEndStream);
                }
            }
            case Http2Frames.TYPE_CONTINUATION -> {
                if ((flags & Http2Frames.FLAG_END_HEADERS) != 0) {
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
