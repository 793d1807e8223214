package io.continuum.broker.relay.transport;

/** The bus connection died or was closed; every stream on it fails with this. */
public final class ConnectionLostException extends TransportException {
    /** Why the connection ended. */
    public enum Reason {
        /** Socket read or write failed, or the peer closed the TCP/TLS connection. */
        SOCKET,
        /** The peer sent GOAWAY. */
        GOAWAY,
        /** No PING acknowledgement within the keepalive timeout. */
        KEEPALIVE_TIMEOUT,
        /** A protocol violation was detected locally. */
        PROTOCOL,
        /** {@link BusConnection#close()} was called. */
        CLOSED_LOCALLY
    }

    private final Reason reason;

    /**
     * @param reason  why
     * @param message description free of header values
     * @param cause   underlying failure, may be {@code null}
     */
    public ConnectionLostException(Reason reason, String message, Throwable cause) {
        super(reason.name().toLowerCase(java.util.Locale.ROOT) + ": " + message, cause);
        this.reason = reason;
    }

    /** @return why the connection ended */
    public Reason reason() {
        return reason;
    }
}
