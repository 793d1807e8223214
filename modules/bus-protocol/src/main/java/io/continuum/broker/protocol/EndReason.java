package io.continuum.broker.protocol;

/**
 * Why a session ended (bus-protocol-v1.md sections 2, 4 and 7); the {@code reason} label of
 * {@code continuum_event_broker_session_ends_total}.
 */
public enum EndReason {
    /** Local SIGTERM/SIGINT drain completed. */
    SHUTDOWN("shutdown"),
    /** A router {@code drain} completed. */
    DRAINED("drained"),
    /** The router refused the attempt (HTTP status, or an {@code error} before {@code welcome}). */
    REFUSED("refused"),
    /** No frame from the router within the negotiated idle timeout. */
    IDLE_TIMEOUT("idle_timeout"),
    /** The router sent a terminal {@code error}. */
    TERMINAL_ERROR("terminal_error"),
    /** The router ended or reset the session stream. */
    ROUTER_CLOSED("router_closed"),
    /** TCP, TLS or HTTP/2 failure, or no response head / welcome in time, before {@code welcome}. */
    CONNECT_FAILED("connect_failed"),
    /** The connection dropped after {@code welcome}. */
    CONNECTION_LOST("connection_lost"),
    /** The router broke the protocol. */
    PROTOCOL_ERROR("protocol_error");

    private final String wire;

    EndReason(String wire) {
        this.wire = wire;
    }

    /**
     * The reason as spelled in metric labels and logs.
     *
     * @return label value
     */
    public String wire() {
        return wire;
    }

    @Override
    public String toString() {
        return wire;
    }
}
