package io.continuum.broker.relay.transport;

import io.continuum.broker.h2.ErrorCode;

/**
 * The peer's response on a stream broke HTTP/2's rules for a stream (RFC 9113 sections 8.1 and 5.1): DATA before
 * the response HEADERS, or DATA after its END_STREAM. The transport has reset the stream (PROTOCOL_ERROR or
 * STREAM_CLOSED: a stream error); the connection and its other streams go on.
 */
public final class MalformedResponseException extends TransportException {
    /**
     * @param streamId  the stream whose response was malformed
     * @param violation what the peer sent out of order, free of header values
     * @param resetCode the RST_STREAM error code this side answered with
     */
    public MalformedResponseException(long streamId, String violation, long resetCode) {
        super("malformed response on stream " + streamId + ": " + violation + "; reset "
                + ErrorCode.name(resetCode));
    }
}
