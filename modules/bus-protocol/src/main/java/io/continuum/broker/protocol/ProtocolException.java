package io.continuum.broker.protocol;

import java.io.Serial;

/**
 * The peer broke bus protocol v1: a malformed frame (bus-protocol-v1.md section 3), a frame the
 * peer's direction may not send, or a known frame with a missing or mistyped required member.
 * <p>
 * The receiver ends the session; the broker's end reason is {@link EndReason#PROTOCOL_ERROR}.
 * The message is precise and built only from fixed text, numbers and short sanitized excerpts
 * (printable ASCII), so it is safe to log.
 */
public final class ProtocolException extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Creates a protocol error.
     *
     * @param message precise, log-safe description, e.g. {@code "frame length 0"}
     */
    public ProtocolException(String message) {
        super(message);
    }

    /**
     * Creates a protocol error caused by a parser failure.
     *
     * @param message precise, log-safe description
     * @param cause   the underlying parser exception
     */
    public ProtocolException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * The code of every protocol error.
     *
     * @return {@link Code#PROTOCOL_ERROR}
     */
    public Code code() {
        return Code.PROTOCOL_ERROR;
    }

    /**
     * The session end reason a client records for this error.
     *
     * @return {@link EndReason#PROTOCOL_ERROR}
     */
    public EndReason endReason() {
        return EndReason.PROTOCOL_ERROR;
    }
}
