package io.continuum.broker.relay.transport;

/** An operation on a stream side that has already ended (e.g. a write after {@link BusStream#endRequest()}). */
public final class StreamClosedException extends TransportException {
    /**
     * @param message description
     */
    public StreamClosedException(String message) {
        super(message);
    }
}
