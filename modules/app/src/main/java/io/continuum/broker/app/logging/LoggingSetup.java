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
import io.continuum.broker.event.EventFormatter;
import io.continuum.broker.event.EventLog;

/**
 * Configures JUL for production: one handler writing one line per record to the given stream (stderr
 * in the broker) through the one {@link EventFormatter}, the broker's own loggers ({@code io.continuum})
 * at the given level, third-party libraries (Helidon, Micrometer, OkHttp, the Kubernetes client) at
 * WARNING. Helidon's own logging.properties discovery is switched off so a stray file in the working
 * directory cannot replace this set-up. Stack traces of causes are written at {@code debug} and finer,
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
     * Installs the handler (replacing any previous root handlers) with the broker at {@code info}.
     *
     * @param format line format
     * @param out    stream to write to
     * @return the installed handler
     */
    public static Handler configure(LogFormat format, OutputStream out) {
        return configure(format, Level.INFO, out);
    }

    /**
     * Installs the handler (replacing any previous root handlers).
     *
     * @param format line format
     * @param level  level of the broker's own loggers ({@code io.continuum}) and of the root
     * @param out    stream to write to
     * @return the installed handler
     */
    public static synchronized Handler configure(LogFormat format, Level level, OutputStream out) {
        System.setProperty("io.helidon.logging.config.disabled", "true");
        LogManager.getLogManager().reset();
        CONFIGURED.clear();
        Logger root = Logger.getLogger("");
        Handler handler = new FlushingHandler(out, formatter(format, level));
        handler.setLevel(Level.ALL);
        root.addHandler(handler);
        root.setLevel(level);
        CONFIGURED.add(root);
        for (String name : LIBRARIES) {
            Logger l = Logger.getLogger(name);
            l.setLevel(Level.WARNING);
            CONFIGURED.add(l);
        }
        Logger broker = Logger.getLogger(BROKER);
        broker.setLevel(level);
        CONFIGURED.add(broker);
        return handler;
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
     * @param format line format
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
