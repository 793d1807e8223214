package io.continuum.broker.app.logging;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.continuum.broker.protocol.Code;

/**
 * Rate-limited refusal warnings (R-SEC-11): per code, the first refusal of a 60 s window is logged;
 * later ones in that window are counted silently; the first log of the next window carries
 * {@code suppressed=<n>}. Windows are fixed, each opened by the first refusal of that code after the
 * previous window closed. Every line has {@code code=<code>}.
 *
 * <p>Wiring: call {@link #refused(Code, String)} wherever {@code BrokerMetrics.subscribeRefused} is
 * called. The message must never contain the credential (it never reaches the relay's refusal path).
 */
public final class RefusalLog {
    /** Window length. */
    public static final Duration WINDOW = Duration.ofSeconds(60);

    private final Logger logger;
    private final LongSupplier nanoClock;
    private final Map<Code, Window> windows = new EnumMap<>(Code.class);

    private RefusalLog(Logger logger, LongSupplier nanoClock) {
        this.logger = logger;
        this.nanoClock = nanoClock;
    }

    /**
     * A refusal log on the given logger with the system's monotonic clock.
     *
     * @param logger logger to warn on
     * @return refusal log
     */
    public static RefusalLog create(Logger logger) {
        return new RefusalLog(logger, System::nanoTime);
    }

    /**
     * A refusal log with an injected monotonic clock (tests).
     *
     * @param logger    logger
     * @param nanoClock monotonic nanoseconds
     * @return refusal log
     */
    public static RefusalLog create(Logger logger, LongSupplier nanoClock) {
        return new RefusalLog(logger, nanoClock);
    }

    /**
     * Records a refusal and logs it unless rate-limited.
     *
     * @param code    refusal code
     * @param message short human-readable reason (no credential, no unbounded data)
     * @return whether a line was logged
     */
    public boolean refused(Code code, String message) {
        long now = nanoClock.getAsLong();
        long suppressedBefore;
        synchronized (windows) {
            Window w = windows.get(code);
            if (w != null && now - w.start < WINDOW.toNanos()) {
                w.suppressed++;
                return false;
            }
            suppressedBefore = w == null ? 0 : w.suppressed;
            windows.put(code, new Window(now));
        }
        if (suppressedBefore > 0) {
            Events.log(logger, Level.WARNING, "stream_refused", "code", code.wire(), "suppressed", suppressedBefore,
                       "message", message);
        } else {
            Events.log(logger, Level.WARNING, "stream_refused", "code", code.wire(), "message", message);
        }
        return true;
    }

    private static final class Window {
        private final long start;
        private long suppressed;

        Window(long start) {
            this.start = start;
        }
    }
}
