package io.continuum.broker.relay.session;

import java.time.Duration;
import java.util.Objects;

import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;

/**
 * How one session attempt went: what the reconnect loop needs to choose the next delay.
 *
 * @param result      the attempt's result ({@code welcomed}, {@code refused}, {@code failed})
 * @param reason      why the session (or attempt) ended
 * @param welcomedFor how long the session stayed welcomed ({@link Duration#ZERO} if never)
 * @param drain       the router's {@code drain}, when the session ended {@code drained}; else null
 * @param retryAfter  a {@code Retry-After} of a 503 refusal, else null
 * @param detail      short log-safe detail of the end
 * @param reconnectAtOnce whether the next attempt goes at once: the session drained to move to a new connection
 *                    because this one's stream ids ran out (nothing failed, so no backoff)
 */
public record SessionOutcome(AttemptResult result, EndReason reason, Duration welcomedFor, Frame.Drain drain,
                             Duration retryAfter, String detail, boolean reconnectAtOnce) {
    /**
     * Validates.
     */
    public SessionOutcome {
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(welcomedFor, "welcomedFor");
    }

    /** An outcome after which the loop's backoff applies. */
    public SessionOutcome(AttemptResult result, EndReason reason, Duration welcomedFor, Frame.Drain drain,
                          Duration retryAfter, String detail) {
        this(result, reason, welcomedFor, drain, retryAfter, detail, false);
    }
}
