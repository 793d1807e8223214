package io.continuum.broker.relay.transport;

/**
 * The peer's response on a stream broke HTTP/2's message rules (RFC 9113 section 8.1), e.g. DATA before the
 * response HEADERS. The transport has reset the stream with PROTOCOL_ERROR (section 8.1.1: a stream error); the
 * connection and its other streams go on.
 */
public final class MalformedResponseException extends TransportException {
    /**
     * @param streamId the stream whose response was malformed
     * @param what     what the peer sent out of order, free of header values
     */
    public MalformedResponseException(long streamId, String what) {
        super("malformed response on stream " + streamId + ": " + what + "; reset PROTOCOL_ERROR");
    }
}
