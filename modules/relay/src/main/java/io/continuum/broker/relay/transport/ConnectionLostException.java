package io.continuum.broker.relay.transport;

/** The bus connection died or was closed; every stream on it fails with this. */
public final class ConnectionLostException extends TransportException {
    /** Why the connection ended. */
    public enum Reason {
        /** Socket read or write failed, or the peer closed the TCP/TLS connection. */
        SOCKET,
        /** The peer sent GOAWAY with an error code. */
        GOAWAY,
        /**
         * The peer's graceful GOAWAY (NO_ERROR, RFC 9113 section 6.8): a new stream is refused, a stream above its
         * last-stream-id was not processed (safe to retry elsewhere), and the connection closes once its last
         * stream is gone.
         */
        GOING_AWAY,
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

    /**
     * @param failure a transport failure, or null
     * @return whether it comes from the peer's graceful GOAWAY ({@link Reason#GOING_AWAY})
     */
    public static boolean goingAway(TransportException failure) {
        return failure instanceof ConnectionLostException lost && lost.reason == Reason.GOING_AWAY;
    }
}
