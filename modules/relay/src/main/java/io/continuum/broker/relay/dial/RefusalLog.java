package io.continuum.broker.relay.dial;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;
import io.continuum.broker.event.Event;
import io.continuum.broker.event.EventLog;
import io.continuum.broker.event.LogWindows;
import io.continuum.broker.event.Severity;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.relay.api.DialDefaults;

/**
 * Rate-limited warning log of refusals, per code (R-SEC 11), on {@link LogWindows}.
 * <p>
 * Windows are fixed and per code: the first refusal of a code after its last window closed opens
 * a new 60 s window and is logged; further refusals of that code inside the window are only
 * counted. The first line of the next window carries {@code suppressed=<n>} when {@code n > 0}
 * refusals were counted silently in the window before it. A line looks like
 * <pre>event=stream_refused code=target_not_allowed stream_id=17 reason=loopback suppressed=3</pre>
 * The reason is cut to 256 characters; the event formatter quotes and escapes it. Nothing else is
 * logged; in particular no credential ever reaches this class. Thread-safe: share one per process.
 */
public final class RefusalLog {
    /** Logger name used by the default constructor. */
    public static final String LOGGER_NAME = "io.continuum.broker.relay.refusals";
    /** Longest reason logged (R-SEC 11 keeps refusal lines short). */
    static final int MAX_REASON_CHARS = 256;

    private final EventLog log;
    private final LogWindows<Code> windows;

    /**
     * The production log: {@link #LOGGER_NAME}, {@link System#nanoTime()}, the spec's window
     * ({@link DialDefaults#REFUSAL_LOG_WINDOW}).
     */
    public RefusalLog() {
        this(EventLog.named(LOGGER_NAME), System::nanoTime, DialDefaults.REFUSAL_LOG_WINDOW);
    }

    /**
     * A log.
     *
     * @param log       where events go, at {@link Severity#WARN}
     * @param nanoClock monotonic clock in nanoseconds
     * @param window    window length
     */
    public RefusalLog(EventLog log, LongSupplier nanoClock, Duration window) {
        this.log = Objects.requireNonNull(log, "log");
        this.windows = new LogWindows<>(nanoClock, TargetResolver.positive(window, "window"));
    }

    /**
     * Records one refusal and logs it unless its code's window is open.
     *
     * @param streamId stream id of the refused subscribe
     * @param code     refusal code
     * @param reason   short reason (may be null)
     * @return true when a line was logged
     */
    public boolean refused(long streamId, Code code, String reason) {
        Objects.requireNonNull(code, "code");
        long suppressed = windows.admit(code);
        if (suppressed == LogWindows.SUPPRESS) {
            return false;
        }
        String r = reason == null ? "" : reason;
        Event event = log.warn("stream_refused").field("code", code.wire()).field("stream_id", streamId)
                .field("reason", r.length() > MAX_REASON_CHARS ? r.substring(0, MAX_REASON_CHARS) : r);
        if (suppressed > 0) {
            event.field("suppressed", suppressed);
        }
        event.log();
        return true;
    }
}
