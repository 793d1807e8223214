package io.continuum.broker.relay.session;

import java.time.Duration;
import java.util.function.LongSupplier;

import io.continuum.broker.event.Event;
import io.continuum.broker.event.EventLog;
import io.continuum.broker.event.LogWindows;
import io.continuum.broker.protocol.Code;

/**
 * The log lines a router's own frames cause, rate-limited as refusals are (R-SEC 11): a router must not be able to
 * fill an operator's disk. A non-terminal {@code error} (bus-protocol-v1.md section 3.2: logged and counted) logs
 * the first per code, and a {@code drain} the first of any, per {@link #WINDOW}; the next window's first line
 * carries {@code suppressed=<n>}. Every frame is still counted ({@code router_errors_total}), and a terminal
 * {@code error}, which ends the session, is always logged. One per broker, across its sessions.
 */
final class RouterFrameLog {
    /** As long as the refusal log's window. */
    static final Duration WINDOW = Duration.ofSeconds(60);
    private static final EventLog LOG = EventLog.of(BusSession.class);

    private final LogWindows<String> windows;

    /** @param nanoClock monotonic clock in nanoseconds */
    RouterFrameLog(LongSupplier nanoClock) {
        this.windows = new LogWindows<>(nanoClock, WINDOW);
    }

    /** A non-terminal {@code error} frame. */
    void nonTerminalError(Code code) {
        long suppressed = windows.admit("router_error " + code.wire());
        if (suppressed != LogWindows.SUPPRESS) {
            withSuppressed(LOG.warn("router_error").field("terminal", false).field("code", code.wire()), suppressed)
                    .log();
        }
    }

    /** A {@code drain} frame: the first of a session's drain, or one that moves its deadline. */
    void drain(String reason, long deadlineMs, int openStreams) {
        long suppressed = windows.admit("drain");
        if (suppressed != LogWindows.SUPPRESS) {
            withSuppressed(LOG.info("drain").field("reason", SessionLife.clip(reason)).field("deadline_ms", deadlineMs)
                    .field("open_streams", openStreams), suppressed).log();
        }
    }

    private static Event withSuppressed(Event event, long suppressed) {
        return suppressed > 0 ? event.field("suppressed", suppressed) : event;
    }
}
