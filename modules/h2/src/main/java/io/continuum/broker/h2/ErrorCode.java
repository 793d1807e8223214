package io.continuum.broker.h2;

import java.util.Optional;

/**
 * The HTTP/2 error codes of RFC 9113 section 7, as RST_STREAM and GOAWAY carry them. A peer may send a code this
 * list does not know; section 7 says to treat it as {@link #INTERNAL_ERROR} where it matters and never as an error
 * of its own, so codes read off the wire stay numbers ({@link FrameHandler}) and {@link #of} / {@link #name(long)}
 * name them for messages.
 */
public enum ErrorCode {
    NO_ERROR(0x0),
    PROTOCOL_ERROR(0x1),
    INTERNAL_ERROR(0x2),
    FLOW_CONTROL_ERROR(0x3),
    SETTINGS_TIMEOUT(0x4),
    STREAM_CLOSED(0x5),
    FRAME_SIZE_ERROR(0x6),
    REFUSED_STREAM(0x7),
    CANCEL(0x8),
    COMPRESSION_ERROR(0x9),
    CONNECT_ERROR(0xa),
    ENHANCE_YOUR_CALM(0xb),
    INADEQUATE_SECURITY(0xc),
    HTTP_1_1_REQUIRED(0xd);

    private static final ErrorCode[] BY_CODE = values();

    private final int code;

    ErrorCode(int code) {
        this.code = code;
    }

    /** The 32-bit value on the wire. */
    public int code() {
        return code;
    }

    /** The code a frame carried, if RFC 9113 names it. */
    public static Optional<ErrorCode> of(long code) {
        return code >= 0 && code < BY_CODE.length ? Optional.of(BY_CODE[(int) code]) : Optional.empty();
    }

    /** The name of a code read off the wire, or its value in hex when RFC 9113 does not name it. */
    public static String name(long code) {
        return of(code).map(Enum::name).orElseGet(() -> "0x" + Long.toHexString(code));
    }
}
