package io.continuum.broker.relay.api;

import java.time.Duration;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.EndReason;

/**
 * What the relay reports for R-MET. The app's metrics implement it directly on Helidon metrics; every
 * label value comes from a bounded enum. Implementations must be thread-safe and must not block.
 */
public interface RelayMetrics {
    /** Reports nothing. */
    RelayMetrics NOOP = new RelayMetrics() {
    };

    /** {@code session_attempts_total{result}}. */
    enum AttemptResult {
        /** The router answered {@code welcome}. */
        WELCOMED("welcomed"),
        /** The router refused (HTTP status, {@code error} frame, protocol error before welcome). */
        REFUSED("refused"),
        /** TCP, TLS or HTTP/2 failure, or no answer in time. */
        FAILED("failed");

        private final String label;

        AttemptResult(String label) {
            this.label = label;
        }

        /**
         * Label value.
         *
         * @return label
         */
        public String label() {
            return label;
        }
    }

    /** {@code publisher_dial_duration_seconds{result}}: how a publisher dial ended, as a label. */
    enum DialOutcome {
        /** The publisher socket connected. */
        CONNECTED("connected"),
        /** Name resolution or every connect attempt failed ({@code upstream_connect_failed}). */
        FAILED("failed");

        private final String label;

        DialOutcome(String label) {
            this.label = label;
        }

        /**
         * Label value.
         *
         * @return label
         */
        public String label() {
            return label;
        }
    }

    /** {@code relayed_bytes_total{direction}}. */
    enum Direction {
        /** Bytes handed to the data stream toward the router. */
        UPSTREAM_TO_ROUTER("upstream_to_router"),
        /** Bytes written to the publisher socket. */
        ROUTER_TO_UPSTREAM("router_to_upstream");

        private final String label;

        Direction(String label) {
            this.label = label;
        }

        /**
         * Label value.
         *
         * @return label
         */
        public String label() {
            return label;
        }
    }

    /**
     * A session attempt finished its handshake phase.
     *
     * @param result how
     */
    default void sessionAttempt(AttemptResult result) {
    }

    /**
     * A session (or an attempt that never reached welcome) ended.
     *
     * @param reason why
     */
    default void sessionEnded(EndReason reason) {
    }

    /** An attempt after the first one of the process started. */
    default void reconnect() {
    }

    /** A {@code subscribe} was answered with {@code stream_opened}. */
    default void subscribeOpened() {
    }

    /**
     * A {@code subscribe} was answered with {@code stream_opened}, with the time it took. The relay calls
     * this one; by default it counts through {@link #subscribeOpened()}.
     *
     * @param sinceSubscribe from the subscribe frame's arrival to {@code stream_opened}
     */
    default void subscribeOpened(Duration sinceSubscribe) {
        subscribeOpened();
    }

    /**
     * A session attempt was welcomed.
     *
     * @param sinceAttemptStart from the start of the attempt (before the TCP connect) to {@code welcome}
     */
    default void busConnected(Duration sinceAttemptStart) {
    }

    /**
     * A publisher dial ended: connected, or refused with {@code upstream_connect_failed} (resolution or every
     * connect attempt failed). Targets refused by a check before dialing are not reported.
     *
     * @param result  whether the socket connected
     * @param elapsed from the start of the checks to the connected socket or the failure
     */
    default void publisherDialed(DialOutcome result, Duration elapsed) {
    }

    /**
     * An {@code error} frame arrived from the router, before or after {@code welcome}.
     *
     * @param code     its code ({@link Code#UNKNOWN} for codes this version does not know)
     * @param terminal whether the router marked it terminal
     */
    default void routerError(Code code, boolean terminal) {
    }

    /**
     * A {@code subscribe} was refused: counted when decided, whether or not its {@code stream_refused} is written.
     *
     * @param code refusal code
     */
    default void subscribeRefused(Code code) {
    }

    /**
     * A {@code stream_refused} frame is being written (counted right before the write, so a router that reads it
     * sees the count too); one dropped because its session ended first is not counted.
     *
     * @param code refusal code
     */
    default void refusalSent(Code code) {
    }

    /**
     * A {@code stream_closed} frame was sent.
     *
     * @param code its code
     */
    default void streamClosed(Code code) {
    }

    /**
     * A data stream's queue toward the router reached {@value #NEAR_BUDGET_PERCENT} % of its per-stream budget
     * for the first time (R-BUF 1; called at most once per stream). An addition beyond R-MET: it shows how close
     * streams come to {@code buffer_overflow} before any overflows.
     */
    default void streamNearBudget() {
    }

    /** The share of the per-stream budget at which {@link #streamNearBudget()} fires. */
    int NEAR_BUDGET_PERCENT = 80;

    /**
     * Bytes relayed.
     *
     * @param direction which way
     * @param bytes     how many
     */
    default void relayed(Direction direction, long bytes) {
    }

    /**
     * {@code unknown_frames_total}: a router frame of a type this broker does not know arrived and was ignored
     * (bus-protocol-v1.md section 3; a newer router, say). A non-terminal {@code error} is counted by
     * {@link #routerError} alone.
     */
    default void unknownFrame() {
    }
}
