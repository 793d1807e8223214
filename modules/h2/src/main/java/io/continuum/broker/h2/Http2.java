package io.continuum.broker.h2;

/**
 * The numbers of RFC 9113 that frames carry, declared once for the codec and every endpoint on it: frame types
 * (section 6), flags, and setting identifiers (section 6.5.2). Error codes are {@link ErrorCode}.
 */
public final class Http2 {
    public static final int TYPE_DATA = 0x0;
    public static final int TYPE_HEADERS = 0x1;
    public static final int TYPE_PRIORITY = 0x2;
    public static final int TYPE_RST_STREAM = 0x3;
    public static final int TYPE_SETTINGS = 0x4;
    public static final int TYPE_PUSH_PROMISE = 0x5;
    public static final int TYPE_PING = 0x6;
    public static final int TYPE_GOAWAY = 0x7;
    public static final int TYPE_WINDOW_UPDATE = 0x8;
    public static final int TYPE_CONTINUATION = 0x9;

    /** DATA and HEADERS: the sender's last frame on the stream. */
    public static final int FLAG_END_STREAM = 0x1;
    /** SETTINGS and PING: an acknowledgement. */
    public static final int FLAG_ACK = 0x1;
    /** HEADERS and CONTINUATION: the header block ends here. */
    public static final int FLAG_END_HEADERS = 0x4;
    public static final int FLAG_PADDED = 0x8;
    /** HEADERS: a priority block (stream dependency and weight) precedes the fragment. */
    public static final int FLAG_PRIORITY = 0x20;

    public static final int SETTINGS_HEADER_TABLE_SIZE = 0x1;
    public static final int SETTINGS_ENABLE_PUSH = 0x2;
    public static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
    public static final int SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
    public static final int SETTINGS_MAX_FRAME_SIZE = 0x5;
    public static final int SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

    private Http2() {
    }
}
