package io.continuum.broker.relay.transport;

/** HTTP/2 frame constants and the few frames this transport writes itself (RFC 9113 section 6). */
final class Http2Frames {
    static final int HEADER_LENGTH = 9;
    static final int TYPE_DATA = 0x0;
    static final int TYPE_HEADERS = 0x1;
    static final int TYPE_RST_STREAM = 0x3;
    static final int TYPE_SETTINGS = 0x4;
    static final int TYPE_PING = 0x6;
    static final int TYPE_GOAWAY = 0x7;
    static final int TYPE_WINDOW_UPDATE = 0x8;
    static final int TYPE_CONTINUATION = 0x9;
    static final int FLAG_END_STREAM = 0x1;
    static final int FLAG_ACK = 0x1;
    static final int FLAG_END_HEADERS = 0x4;
    static final int FLAG_PADDED = 0x8;
    static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
    static final int SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
    static final int SETTINGS_MAX_FRAME_SIZE = 0x5;
    /**
     * The frame payload every peer accepts (SETTINGS_MAX_FRAME_SIZE's initial value). Larger DATA frames, up to what
     * the peer announces, were measured to change nothing (TLS records stay 16 KiB; 9 bytes saved per 16 KiB).
     */
    static final int MAX_FRAME_PAYLOAD = 16_384;

    private Http2Frames() {
    }

    static void writeHeader(byte[] target, int length, int type, int flags, int streamId) {
        writeHeader(target, 0, length, type, flags, streamId);
    }

    static void writeHeader(byte[] target, int at, int length, int type, int flags, int streamId) {
        target[at] = (byte) (length >>> 16);
        target[at + 1] = (byte) (length >>> 8);
        target[at + 2] = (byte) length;
        target[at + 3] = (byte) type;
        target[at + 4] = (byte) flags;
        target[at + 5] = (byte) ((streamId >>> 24) & 0x7F);
        target[at + 6] = (byte) (streamId >>> 16);
        target[at + 7] = (byte) (streamId >>> 8);
        target[at + 8] = (byte) streamId;
    }

    static byte[] windowUpdate(int streamId, int increment) {
        byte[] frame = new byte[HEADER_LENGTH + 4];
        writeHeader(frame, 4, TYPE_WINDOW_UPDATE, 0, streamId);
        putInt(frame, HEADER_LENGTH, increment & 0x7FFF_FFFF);
        return frame;
    }

    static byte[] rstStream(int streamId, int errorCode) {
        byte[] frame = new byte[HEADER_LENGTH + 4];
        writeHeader(frame, 4, TYPE_RST_STREAM, 0, streamId);
        putInt(frame, HEADER_LENGTH, errorCode);
        return frame;
    }

    static byte[] ping(long opaque, boolean ack) {
        byte[] frame = new byte[HEADER_LENGTH + 8];
        writeHeader(frame, 8, TYPE_PING, ack ? FLAG_ACK : 0, 0);
        putInt(frame, HEADER_LENGTH, (int) (opaque >>> 32));
        putInt(frame, HEADER_LENGTH + 4, (int) opaque);
        return frame;
    }

    static byte[] dataHeader(int streamId, int length, boolean endStream) {
        byte[] header = new byte[HEADER_LENGTH];
        writeHeader(header, length, TYPE_DATA, endStream ? FLAG_END_STREAM : 0, streamId);
        return header;
    }

    static void putInt(byte[] target, int offset, int value) {
        target[offset] = (byte) (value >>> 24);
        target[offset + 1] = (byte) (value >>> 16);
        target[offset + 2] = (byte) (value >>> 8);
        target[offset + 3] = (byte) value;
    }

    static int getInt(byte[] source, int offset) {
        return ((source[offset] & 0xFF) << 24) | ((source[offset + 1] & 0xFF) << 16)
                | ((source[offset + 2] & 0xFF) << 8) | (source[offset + 3] & 0xFF);
    }
}
