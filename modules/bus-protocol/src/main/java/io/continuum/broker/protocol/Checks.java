package io.continuum.broker.protocol;

/**
 * Value rules shared by the encoder and the decoder, so that every frame the encoder accepts
 * decodes back to itself.
 */
final class Checks {
    /** Largest stream id: 2^53-1, exact in every JSON implementation. */
    static final long MAX_STREAM_ID = (1L << 53) - 1;
    static final String STREAM_ID_RANGE = "1..2^53-1";
    /** Longest {@code message}, in Unicode code points. */
    static final int MAX_MESSAGE_CHARS = 256;
    static final int MAX_SESSION_ID_CHARS = 128;
    static final int MAX_HOST_CHARS = 253;

    private Checks() {
    }

    static boolean isStreamId(long id) {
        return id >= 1 && id <= MAX_STREAM_ID;
    }

    /**
     * Why a session id is unacceptable, or null when it is fine. Section 3.2 calls it opaque, 1..128
     * characters; it travels back verbatim as the value of the {@code continuum-session-id} header of
     * every data stream, so it is accepted exactly when a header field value carries it unchanged
     * (RFC 9110 section 5.5): visible ASCII (0x21..0x7E) and interior spaces. Refused: leading or
     * trailing whitespace (an HTTP stack trims it), control characters including TAB (a header line
     * cannot carry CR, LF or NUL; TAB is refused with them rather than trusting every stack to keep
     * it), and non-ASCII (no encoding is defined for it in a header value).
     */
    static String sessionIdProblem(String id) {
        int n = id.length();
        int chars = id.codePointCount(0, n);
        if (chars < 1 || chars > MAX_SESSION_ID_CHARS) {
            return "welcome.session_id length " + chars + " out of range 1.." + MAX_SESSION_ID_CHARS;
        }
        for (int i = 0; i < n; i++) {
            char c = id.charAt(i);
            if (c < 0x20 || c == 0x7F) {
                return "welcome.session_id has a control character (U+" + String.format("%04X", (int) c)
                        + ") at index " + i + ": a header value cannot carry it";
            }
            if (c > 0x7E) {
                return "welcome.session_id has a non-ASCII character at index " + i
                        + ": a header value carries ASCII only";
            }
        }
        if (id.charAt(0) == ' ' || id.charAt(n - 1) == ' ') {
            return "welcome.session_id has leading or trailing whitespace: a header value would lose it";
        }
        return null;
    }

    /**
     * Why a {@code zmq_tcp} host is unacceptable to the codec, or null when its shape is fine:
     * non-empty, at most 253 characters, no brackets, no whitespace or control characters. The
     * relay checks full host syntax.
     */
    static String hostProblem(String host) {
        if (host.isEmpty()) {
            return "target.host is empty";
        }
        if (host.length() > MAX_HOST_CHARS) {
            return "target.host longer than " + MAX_HOST_CHARS + " characters";
        }
        for (int i = 0; i < host.length(); i++) {
            char c = host.charAt(i);
            if (c == '[' || c == ']') {
                return "target.host contains a bracket";
            }
            if (c <= 0x20 || c == 0x7F || Character.isISOControl(c) || Character.isWhitespace(c)
                    || Character.isSpaceChar(c)) {
                return "target.host contains whitespace or a control character";
            }
        }
        return null;
    }

    static boolean isPort(long port) {
        return port >= 1 && port <= 65_535;
    }

    /**
     * Truncates to at most 256 code points, never splitting a surrogate pair.
     */
    static String truncateMessage(String message) {
        if (message == null || message.length() <= MAX_MESSAGE_CHARS) {
            return message;
        }
        if (message.codePointCount(0, message.length()) <= MAX_MESSAGE_CHARS) {
            return message;
        }
        return message.substring(0, message.offsetByCodePoints(0, MAX_MESSAGE_CHARS));
    }
}
