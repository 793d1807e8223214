package io.continuum.broker.protocol;

import java.util.HashMap;
import java.util.Map;

/**
 * The one code enum of bus-protocol-v1.md section 7, used in {@code stream_refused},
 * {@code stream_closed}, {@code error} and metric labels. Unrecognized wire values map to
 * {@link #UNKNOWN}, so a metric label can never take an unbounded value (R-MET).
 */
public enum Code {
    UNSUPPORTED_TARGET("unsupported_target"),
    TARGET_NOT_ADVERTISED("target_not_advertised"),
    TARGET_NOT_ALLOWED("target_not_allowed"),
    UPSTREAM_CONNECT_FAILED("upstream_connect_failed"),
    TOO_MANY_STREAMS("too_many_streams"),
    DUPLICATE_STREAM("duplicate_stream"),
    DRAINING("draining"),
    IDLE_TIMEOUT("idle_timeout"),
    UPSTREAM_CLOSED("upstream_closed"),
    BUFFER_OVERFLOW("buffer_overflow"),
    UNKNOWN_STREAM("unknown_stream"),
    PROTOCOL_ERROR("protocol_error"),
    UNAUTHORIZED("unauthorized"),
    UNSUPPORTED_VERSION("unsupported_version"),
    SUPERSEDED("superseded"),
    INTERNAL_ERROR("internal_error"),
    UNKNOWN("unknown");

    private static final Map<String, Code> BY_WIRE = new HashMap<>();

    static {
        for (Code c : values()) {
            BY_WIRE.put(c.wire, c);
        }
    }

    private final String wire;

    Code(String wire) {
        this.wire = wire;
    }

    /**
     * The code as it is spelled on the wire and in metric labels.
     *
     * @return wire name
     */
    public String wire() {
        return wire;
    }

    /**
     * Maps a wire value to a code; anything unrecognized (including null) is {@link #UNKNOWN}.
     *
     * @param wire value received
     * @return code, never null
     */
    public static Code fromWire(String wire) {
        if (wire == null) {
            return UNKNOWN;
        }
        Code c = BY_WIRE.get(wire);
        return c == null ? UNKNOWN : c;
    }

    @Override
    public String toString() {
        return wire;
    }
}
