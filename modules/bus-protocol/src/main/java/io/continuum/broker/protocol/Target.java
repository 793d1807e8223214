package io.continuum.broker.protocol;

/**
 * The {@code target} of a {@code subscribe} (bus-protocol-v1.md section 3.2). A target that is not
 * a valid {@code zmq_tcp} one still decodes (as {@link AnnouncedSource} or {@link Unsupported}) so
 * the subscribe can be answered with {@code unsupported_target} for its stream id.
 */
public sealed interface Target {
    /** {@code target.kind} of a ZMQ publisher reachable over TCP. */
    String KIND_ZMQ_TCP = "zmq_tcp";
    /** {@code target.kind} of a source announced by a kv_listener. */
    String KIND_ANNOUNCED_SOURCE = "announced_source";

    /**
     * A ZMQ publisher reachable over TCP. Shape-validated by the codec: namespace non-empty, host
     * at most 253 characters or an IP literal (IPv6 without brackets), port 1..65535. Whether it is
     * advertised or allowed is the relay's business, not the codec's.
     *
     * @param host      DNS name or IP literal, IPv6 without brackets
     * @param port      1..65535
     */
    record ZmqTcp(String namespace, String host, int port) implements Target {
    }

    /**
     * A source announced by a kv_listener; the broker never serves these (R-BEH 10).
     *
     * @param sourceId source id, may be null when absent
     */
    record AnnouncedSource(String sourceId) implements Target {
    }

    /**
     * Any other kind, or a {@code zmq_tcp} target with a missing or invalid member.
     *
     * @param kind   the kind as received (null when absent or not a string); chosen by the router,
     *               so sanitize before logging
     * @param reason short human-readable reason from a fixed set, safe to log
     */
    record Unsupported(String kind, String reason) implements Target {
    }
}
