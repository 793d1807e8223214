package io.continuum.broker.relay.transport;

/** No stream slot under the peer's {@code MAX_CONCURRENT_STREAMS} freed up within the slot timeout. */
public final class SlotTimeoutException extends TransportException {
    /**
     * @param message description
     */
    public SlotTimeoutException(String message) {
        super(message);
    }
}
