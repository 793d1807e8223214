package io.continuum.broker.relay.session;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.event.Severity;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.transport.BusConnection;

/**
 * The last step of every session attempt, however it ended: nothing of it keeps running (revocation listener,
 * streams, connection), the metrics and the status page learn the end, one {@code session_ended} event tells it,
 * and the credential is forgotten.
 */
final class Teardown {
    private static final EventLog LOG = EventLog.of(BusSession.class);

    private final SessionLife life;
    private final SessionStreams streams;
    private final SessionHeaders headers;
    private final RelayMetrics metrics;

    Teardown(SessionLife life, SessionStreams streams, SessionHeaders headers, RelayMetrics metrics) {
        this.life = life;
        this.streams = streams;
        this.headers = headers;
        this.metrics = metrics;
    }

    /**
     * Ends the session if nothing did yet (as a lost connection), then tears it down.
     *
     * @param revocation   the view listener of a welcomed session, or null
     * @param wasWelcomed  whether the session was welcomed (its attempt was counted then)
     * @param leaveStatus  takes the session off the status page
     * @return how the session ended
     */
    SessionLife.End run(AutoCloseable revocation, boolean wasWelcomed, Runnable leaveStatus) {
        if (!life.ended()) {
            life.end(AttemptResult.FAILED, EndReason.CONNECTION_LOST, "session ended");
        }
        SessionLife.End e = life.end();
        if (revocation != null) {
            try {
                revocation.close();
            } catch (Exception ignored) {
                // best effort: the session is gone, a late revocation finds no stream
            }
        }
        streams.closeAll();
        BusConnection c = life.connection();
        if (c != null) {
            c.close();
        }
        // By what happened, not by the end's label: a shutdown racing a welcome may label a welcomed session's
        // end as a failed attempt, and that attempt was already counted (welcomed).
        if (!wasWelcomed) {
            metrics.sessionAttempt(e.result());
        }
        metrics.sessionEnded(e.reason());
        leaveStatus.run();
        Severity level = switch (e.reason()) {
            case SHUTDOWN, DRAINED -> Severity.INFO;
            default -> Severity.WARN;
        };
        LOG.at(level, "session_ended").field("result", e.result().label()).field("reason", e.reason().wire())
                .field("session_id", headers.sessionId()).field("detail", SessionLife.clip(e.detail())).log();
        headers.forgetCredential();
        return e;
    }
}
