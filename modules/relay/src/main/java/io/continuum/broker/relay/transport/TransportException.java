package io.continuum.broker.relay.transport;

/**
 * Base of every bus transport failure. Messages never contain header values (the credential).
 */
public sealed class TransportException extends Exception
        permits BusConnectException, SlotTimeoutException, StreamResetException, ConnectionLostException,
        StreamClosedException, MalformedResponseException {
    /**
     * @param message what failed, free of header values
     */
    public TransportException(String message) {
        super(message);
    }

    /**
     * @param message what failed, free of header values
     * @param cause   underlying failure
     */
    public TransportException(String message, Throwable cause) {
        super(message, cause);
    }
}
