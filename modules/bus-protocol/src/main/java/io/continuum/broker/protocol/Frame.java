package io.continuum.broker.protocol;

import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * One frame of the session stream (bus-protocol-v1.md section 3): a 4-byte big-endian length,
 * then that many bytes of UTF-8 JSON holding one object with a string member {@code type}.
 * <p>
 * {@link ClientFrame}s travel broker to router, {@link RouterFrame}s router to broker;
 * {@link Heartbeat} travels both ways. A frame whose {@code type} is not known decodes as
 * {@link Unknown}, which receivers ignore (counted, logged at debug).
 */
public sealed interface Frame {
    /**
     * The {@code type} member as spelled on the wire.
     *
     * @return frame type
     */
    String type();

    /** Frames the broker sends. */
    sealed interface ClientFrame extends Frame permits Hello, Heartbeat, StreamOpened, StreamRefused,
            StreamClosed, Draining {
    }

    /** Frames the router sends. */
    sealed interface RouterFrame extends Frame permits Welcome, Heartbeat, Subscribe, Unsubscribe, Drain,
            ErrorFrame, Unknown {
    }

    /**
     * {@code hello}: the first client frame, exactly once.
     *
     * @param protocolVersions    versions offered (the broker offers {@code [1]})
     * @param role                {@code broker}
     * @param clientId            client id the router binds the credential to
     * @param kubernetesNamespace the broker's Kubernetes namespace
     * @param dynamoNamespaces    Dynamo namespaces covered
     * @param agent               informational agent string, may be null
     */
    record Hello(List<Integer> protocolVersions, String role, String clientId, String kubernetesNamespace,
                 List<String> dynamoNamespaces, String agent) implements ClientFrame {
        /** The broker's role. */
        public static final String ROLE_BROKER = "broker";

        /**
         * Validates and copies.
         */
        public Hello {
            protocolVersions = List.copyOf(protocolVersions);
            Objects.requireNonNull(role, "role");
            Objects.requireNonNull(clientId, "clientId");
            Objects.requireNonNull(kubernetesNamespace, "kubernetesNamespace");
            dynamoNamespaces = List.copyOf(dynamoNamespaces);
        }

        @Override
        public String type() {
            return "hello";
        }
    }

    /**
     * {@code heartbeat}, both directions.
     */
    record Heartbeat() implements ClientFrame, RouterFrame {
        /** The only instance anyone needs. */
        public static final Heartbeat INSTANCE = new Heartbeat();

        @Override
        public String type() {
            return "heartbeat";
        }
    }

    /**
     * {@code stream_opened}: the data stream's HEADERS are on the wire.
     */
    record StreamOpened(long streamId) implements ClientFrame {
        @Override
        public String type() {
            return "stream_opened";
        }
    }

    /**
     * {@code stream_refused}: the subscribe was refused; nothing was opened.
     *
     * @param message  optional human-readable detail (at most 256 characters on the wire), may be null
     */
    record StreamRefused(long streamId, Code code, String message) implements ClientFrame {
        /**
         * Validates.
         */
        public StreamRefused {
            Objects.requireNonNull(code, "code");
        }

        @Override
        public String type() {
            return "stream_refused";
        }
    }

    /**
     * {@code stream_closed}: an opened stream ended on its own.
     *
     * @param code     why
     */
    record StreamClosed(long streamId, Code code) implements ClientFrame {
        /**
         * Validates.
         */
        public StreamClosed {
            Objects.requireNonNull(code, "code");
        }

        @Override
        public String type() {
            return "stream_closed";
        }
    }

    /**
     * {@code draining}: the broker is shutting down.
     *
     * @param deadlineMs how long open streams may still run
     */
    record Draining(long deadlineMs) implements ClientFrame {
        @Override
        public String type() {
            return "draining";
        }
    }

    /**
     * {@code welcome}: the first router frame of a successful session. Limits the router did not
     * send are empty here; {@link SessionLimits#negotiate} applies defaults and clamping.
     *
     * @param protocolVersion     negotiated version
     * @param sessionId           opaque session id, 1..128 visible ASCII characters and interior spaces
     *                            (checked by the codec: it is echoed in the {@code continuum-session-id} header)
     * @param heartbeatIntervalMs heartbeat interval, if sent
     * @param idleTimeoutMs       idle timeout, if sent
     * @param maxStreams          open + opening stream limit, if sent
     * @param maxStreamBufferBytes per-stream buffer budget, if sent
     * @param maxFrameBytes       frame size limit, if sent
     */
    record Welcome(int protocolVersion, String sessionId, OptionalLong heartbeatIntervalMs,
                   OptionalLong idleTimeoutMs, OptionalLong maxStreams, OptionalLong maxStreamBufferBytes,
                   OptionalLong maxFrameBytes) implements RouterFrame {
        /**
         * Validates.
         */
        public Welcome {
            Objects.requireNonNull(sessionId, "sessionId");
            Objects.requireNonNull(heartbeatIntervalMs, "heartbeatIntervalMs");
            Objects.requireNonNull(idleTimeoutMs, "idleTimeoutMs");
            Objects.requireNonNull(maxStreams, "maxStreams");
            Objects.requireNonNull(maxStreamBufferBytes, "maxStreamBufferBytes");
            Objects.requireNonNull(maxFrameBytes, "maxFrameBytes");
        }

        @Override
        public String type() {
            return "welcome";
        }
    }

    /**
     * {@code subscribe}: open a data stream to {@code target}.
     *
     * @param streamId stream id, 1..2^53-1
     * @param target   target, possibly {@link Target.Unsupported}
     */
    record Subscribe(long streamId, Target target) implements RouterFrame {
        /**
         * Validates.
         */
        public Subscribe {
            Objects.requireNonNull(target, "target");
        }

        @Override
        public String type() {
            return "subscribe";
        }
    }

    /**
     * {@code unsubscribe}: close a stream silently.
     */
    record Unsubscribe(long streamId) implements RouterFrame {
        @Override
        public String type() {
            return "unsubscribe";
        }
    }

    /**
     * {@code drain}: stop taking subscribes, let open streams finish, reconnect.
     *
     * @param reason     {@code rebalance}, {@code shutdown}, {@code maintenance} or another string
     * @param deadlineMs how long open streams may run; empty when the router sent none (the broker
     *                   then uses its own {@code drain_deadline})
     */
    record Drain(String reason, OptionalLong deadlineMs) implements RouterFrame {
        /** The reason with the fast reconnect path (bus-protocol-v1.md section 4 item 5). */
        public static final String REASON_REBALANCE = "rebalance";

        /**
         * Validates.
         */
        public Drain {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(deadlineMs, "deadlineMs");
        }

        /**
         * Whether this drain is a rebalance.
         *
         * @return true for reason {@code rebalance}
         */
        public boolean isRebalance() {
            return REASON_REBALANCE.equals(reason);
        }

        @Override
        public String type() {
            return "drain";
        }
    }

    /**
     * {@code error}: terminal ends the session, otherwise logged and counted.
     *
     * @param code     code, {@link Code#UNKNOWN} for anything unrecognized
     * @param message  optional detail, may be null
     * @param terminal whether the session ends (absent means false)
     */
    record ErrorFrame(Code code, String message, boolean terminal) implements RouterFrame {
        /**
         * Validates.
         */
        public ErrorFrame {
            Objects.requireNonNull(code, "code");
        }

        @Override
        public String type() {
            return "error";
        }
    }

    /**
     * A frame whose {@code type} this version does not know; ignored by receivers.
     *
     * @param type the type as received
     */
    record Unknown(String type) implements RouterFrame {
        /**
         * Validates.
         */
        public Unknown {
            Objects.requireNonNull(type, "type");
        }
    }
}
