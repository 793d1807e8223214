package io.continuum.broker.relay.api;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.SessionLimits;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;

/**
 * What an operator sees on {@code /statusz}. Never contains the credential.
 *
 * @param state          where the session loop and its current session stand
 * @param sessionId      current session id, or null
 * @param limits         negotiated limits, or null
 * @param nextAttemptAt  when the next attempt starts while backing off, or null
 * @param bufferedBytes  bytes queued toward the router across the session's streams
 * @param openStreams    open streams, oldest first
 * @param recentEnds     the last few session ends, oldest first
 * @param recentRefusals the last few refusals, oldest first
 */
public record RelayStatus(SessionState state, String sessionId, SessionLimits limits,
                          Instant nextAttemptAt, long bufferedBytes, List<OpenStream> openStreams,
                          List<SessionEnd> recentEnds, List<Refusal> recentRefusals) {
    /** Copies the lists. */
    public RelayStatus {
        java.util.Objects.requireNonNull(state, "state");
        openStreams = List.copyOf(openStreams);
        recentEnds = List.copyOf(recentEnds);
        recentRefusals = List.copyOf(recentRefusals);
    }

    /**
     * An open stream.
     *
     * @param streamId         stream id
     * @param target           {@code namespace/host:port}
     * @param age              time since subscribe
     * @param bytesToRouter    bytes relayed publisher to router
     * @param bytesToPublisher bytes relayed router to publisher
     * @param bufferedBytes    bytes queued toward the router, overhead included
     */
    public record OpenStream(long streamId, String target, Duration age, long bytesToRouter, long bytesToPublisher,
                             long bufferedBytes) {
    }

    /**
     * A finished session or attempt.
     *
     * @param at     when it ended
     * @param result attempt result
     * @param reason end reason
     * @param detail short, log-safe detail
     */
    public record SessionEnd(Instant at, AttemptResult result, EndReason reason, String detail) {
    }

    /**
     * A refused subscribe.
     *
     * @param at       when
     * @param streamId stream id
     * @param code     code
     * @param reason   short reason
     */
    public record Refusal(Instant at, long streamId, Code code, String reason) {
    }
}
