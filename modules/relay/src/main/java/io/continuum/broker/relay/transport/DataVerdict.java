package io.continuum.broker.relay.transport;

import io.continuum.broker.h2.ErrorCode;

/**
 * What becomes of an inbound DATA frame, decided by its stream ({@link Http2BusStream#dataVerdictLocked()}): RFC
 * 9113 makes DATA a response's stream does not allow a stream error, or lets it be ignored, never a connection
 * error.
 */
enum DataVerdict {
    /** The body of a live stream: queued for its reader. */
    PASS(null, 0),
    /**
     * For a stream this side is done with (finished or reset) or never opened: ignored, as RFC 9113 section 5.1
     * allows for a closed stream, and credited to the connection window.
     */
    IGNORE(null, 0),
    /** Before the stream's response HEADERS: a malformed response (section 8.1.1: stream error PROTOCOL_ERROR). */
    BEFORE_HEADERS("DATA before the response HEADERS", ErrorCode.PROTOCOL_ERROR.code()),
    /** After the response's END_STREAM, the request still open (section 5.1, half-closed (remote): STREAM_CLOSED). */
    AFTER_END_STREAM("DATA after the response's END_STREAM", ErrorCode.STREAM_CLOSED.code());

    private final String violation;
    private final long resetCode;

    DataVerdict(String violation, long resetCode) {
        this.violation = violation;
        this.resetCode = resetCode;
    }

    /** @return whether the frame breaks its stream's rules: the stream is reset */
    boolean resetsStream() {
        return violation != null;
    }

    /** @return what the peer did wrong, for {@link MalformedResponseException} */
    String violation() {
        return violation;
    }

    /** @return the RST_STREAM error code */
    long resetCode() {
        return resetCode;
    }
}
