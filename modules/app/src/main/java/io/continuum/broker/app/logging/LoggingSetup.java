package io.continuum.broker.app.logging;

import java.io.OutputStream;
import java.io.UnsupportedEncodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.StreamHandler;

import io.continuum.broker.app.config.LogFormat;
import io.continuum.broker.app.config.LogLevel;
import io.continuum.broker.event.EventFormatter;
import io.continuum.broker.event.EventLog;

/**
 * Configures JUL for production: one handler writing one line per record to the given stream (stderr
 * in the broker) through the one {@link EventFormatter}, the broker's own loggers ({@code io.continuum})
 * at the configured {@code log_level}, the libraries it embeds (Helidon, Micrometer, OkHttp, the
 * Kubernetes client) at the same level except that at {@code info} they stay at {@code warn} (their info
 * lines are start-up chatter), anything else never chattier than {@code info}. Helidon's own
 * logging.properties discovery is switched off so a stray file in the working directory cannot replace
 * this set-up. Stack traces of causes are written at {@code debug} and finer,
 * and always in JSON (a JSON line carries them without hurting a reader).
 */
public final class LoggingSetup {
    /** Loggers of the libraries the broker embeds. */
    public static final List<String> LIBRARIES = List.of("io.helidon", "io.micrometer", "okhttp3", "io.kubernetes");
    /** The broker's own loggers. */
    public static final String BROKER = "io.continuum";

    // JUL holds loggers weakly: a configured logger that is collected loses its level, and its
    // children fall back to the root's. These references keep the configured ones alive.
    private static final List<Logger> CONFIGURED = new ArrayList<>();
    private static final EventLog UNCAUGHT = EventLog.named("io.continuum.broker.app");

    private LoggingSetup() {
    }

    /**
     * Installs the handler (replacing any previous root handlers) at {@code log_level: info}: used before
     * the configuration is read, so that even a configuration error is an event line.
     *
     * @param out    stream to write to
     * @return the installed handler
     */
    public static Handler configure(LogFormat format, OutputStream out) {
        return configure(format, LogLevel.INFO, out);
    }

    /**
     * Installs the handler (replacing any previous root handlers) for a {@code log_level}.
     *
     * @param out    stream to write to
     * @return the installed handler
     */
    public static Handler configure(LogFormat format, LogLevel level, OutputStream out) {
        Level broker = julLevel(level);
        return configure(format, broker, level == LogLevel.INFO ? Level.WARNING : broker, out);
    }

    /**
     * Installs the handler with the broker's loggers at a JUL level and the libraries at WARNING (tests of
     * the formatter at levels {@code log_level} does not name).
     *
     * @param level  level of the broker's own loggers ({@code io.continuum})
     * @param out    stream to write to
     * @return the installed handler
     */
    public static Handler configure(LogFormat format, Level level, OutputStream out) {
        return configure(format, level, Level.WARNING, out);
    }

    private static synchronized Handler configure(LogFormat format, Level broker, Level libraries, OutputStream out) {
        System.setProperty("io.helidon.logging.config.disabled", "true");
        LogManager.getLogManager().reset();
        CONFIGURED.clear();
        Logger root = Logger.getLogger("");
        Handler handler = new FlushingHandler(out, formatter(format, broker));
        handler.setLevel(Level.ALL);
        root.addHandler(handler);
        // Loggers nobody configured follow the root: never chattier than info.
        root.setLevel(broker.intValue() > Level.INFO.intValue() ? broker : Level.INFO);
        CONFIGURED.add(root);
        for (String name : LIBRARIES) {
            Logger l = Logger.getLogger(name);
            l.setLevel(libraries);
            CONFIGURED.add(l);
        }
        Logger own = Logger.getLogger(BROKER);
        own.setLevel(broker);
        CONFIGURED.add(own);
        return handler;
    }

    /**
     * The JUL level of a {@code log_level}.
     *
     * @return {@code SEVERE}, {@code WARNING}, {@code INFO} or {@code FINE}
     */
    public static Level julLevel(LogLevel level) {
        return switch (level) {
            case ERROR -> Level.SEVERE;
            case WARN -> Level.WARNING;
            case INFO -> Level.INFO;
            case DEBUG -> Level.FINE;
        };
    }

    /**
     * Makes an uncaught exception one {@code uncaught_exception} event instead of the JVM's bare stack
     * trace on stderr. Process-wide, so only the production entry point calls it (never in-process tests).
     */
    public static void logUncaughtExceptions() {
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> UNCAUGHT.error("uncaught_exception")
                .field("thread", thread.getName()).cause(e).log());
    }

    /**
     * The formatter for a format and level: stack traces at {@code debug} and finer, and always in JSON.
     *
     * @param level  the broker's level
     * @return formatter
     */
    public static EventFormatter formatter(LogFormat format, Level level) {
        boolean json = format == LogFormat.JSON;
        return new EventFormatter(json ? EventFormatter.Style.JSON : EventFormatter.Style.LOGFMT,
                json || level.intValue() <= Level.FINE.intValue());
    }

    /** A stream handler that flushes every line (a crash loses nothing). */
    private static final class FlushingHandler extends StreamHandler {
        FlushingHandler(OutputStream out, java.util.logging.Formatter formatter) {
            super(out, formatter);
            try {
                // The formatter writes ASCII only; UTF-8 keeps it so whatever the platform charset is.
                setEncoding(StandardCharsets.UTF_8.name());
            } catch (UnsupportedEncodingException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public synchronized void publish(LogRecord record) {
            super.publish(record);
            flush();
        }

        @Override
        public synchronized void close() {
            flush(); // never close the process's stderr
        }
    }
}
