package io.continuum.broker.relay.transport;

/** Names of HTTP/2 error codes (RFC 9113 section 7), for messages. */
final class Http2ErrorCodes {
    static final long PROTOCOL_ERROR = 0x1;
    static final long STREAM_CLOSED = 0x5;

    private static final String[] NAMES = {
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
        "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
        "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"
    };

    private Http2ErrorCodes() {
    }

    static String name(long code) {
        return code >= 0 && code < NAMES.length ? NAMES[(int) code] : "0x" + Long.toHexString(code);
    }
}
