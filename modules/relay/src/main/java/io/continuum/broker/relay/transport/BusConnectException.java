package io.continuum.broker.relay.transport;

/** Setting up the bus connection failed. */
public final class BusConnectException extends TransportException {
    /** Which stage failed. */
    public enum Kind {
        /** Resolving or TCP-connecting to the router. */
        TCP,
        /** TLS handshake, certificate or name verification, or ALPN did not select {@code h2}. */
        TLS,
        /** HTTP/2 preface or SETTINGS exchange. */
        HTTP2,
        /** The whole set-up did not finish within the connect timeout. */
        TIMEOUT
    }

    private final Kind kind;

    /**
     * @param kind    failed stage
     * @param message description free of header values
     * @param cause   underlying failure, may be {@code null}
     */
    public BusConnectException(Kind kind, String message, Throwable cause) {
        super(kind.name().toLowerCase(java.util.Locale.ROOT) + ": " + message, cause);
        this.kind = kind;
    }

    /** @return which stage failed */
    public Kind kind() {
        return kind;
    }
}
