package io.continuum.broker.app.logging;

import java.io.OutputStream;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.StreamHandler;

import io.continuum.broker.app.config.LogFormat;
import io.continuum.broker.app.config.LogLevel;

/**
 * Configures JUL for production: one handler writing one line per record to the given stream
 * (stderr in the broker), {@code io.continuum} at the configured {@code log_level}, the libraries
 * (Helidon, Micrometer, OkHttp, the Kubernetes client) at the same level except that at
 * {@code info} they stay at {@code warn} (their info lines are start-up chatter). Helidon's own
 * logging.properties discovery is switched off so a stray file in the working directory cannot
 * replace this set-up.
 */
public final class LoggingSetup {
    private static final String[] LIBRARIES = {"io.helidon", "io.micrometer", "okhttp3", "io.kubernetes"};
    /** JUL holds loggers weakly: a configured level is lost when its logger is collected, so keep them. */
    private static final List<Logger> CONFIGURED = new CopyOnWriteArrayList<>();

    private LoggingSetup() {
    }

    /**
     * Installs the handler at {@code info} (replacing any previous root handlers).
     *
     * @param format line format
     * @param out    stream to write to
     * @return the installed handler
     */
    public static Handler configure(LogFormat format, OutputStream out) {
        return configure(format, LogLevel.INFO, out);
    }

    /**
     * Installs the handler (replacing any previous root handlers).
     *
     * @param format line format
     * @param level  {@code log_level}
     * @param out    stream to write to
     * @return the installed handler
     */
    public static Handler configure(LogFormat format, LogLevel level, OutputStream out) {
        System.setProperty("io.helidon.logging.config.disabled", "true");
        LogManager.getLogManager().reset();
        Logger root = Logger.getLogger("");
        Handler handler = new FlushingHandler(out, new LineFormatter(format));
        handler.setLevel(Level.ALL);
        root.addHandler(handler);
        Level project = julLevel(level);
        Level libraries = level == LogLevel.INFO ? Level.WARNING : project;
        // Other libraries follow the root: never chattier than info.
        root.setLevel(project.intValue() > Level.INFO.intValue() ? project : Level.INFO);
        CONFIGURED.clear();
        for (String name : LIBRARIES) {
            keep(name).setLevel(libraries);
        }
        keep("io.continuum").setLevel(project);
        return handler;
    }

    /**
     * The JUL level of a {@code log_level}.
     *
     * @param level configured level
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

    private static Logger keep(String name) {
        Logger logger = Logger.getLogger(name);
        CONFIGURED.add(logger);
        return logger;
    }

    /** A stream handler that flushes every line (a crash loses nothing). */
    private static final class FlushingHandler extends StreamHandler {
        FlushingHandler(OutputStream out, java.util.logging.Formatter formatter) {
            super(out, formatter);
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
