package io.continuum.broker.app.logging;

import java.io.OutputStream;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.StreamHandler;

import io.continuum.broker.app.config.LogFormat;

/**
 * Configures JUL for production: one handler writing one line per record to the given stream
 * (stderr in the broker), {@code io.continuum} at INFO, third-party libraries (Helidon, Micrometer,
 * OkHttp, the Kubernetes client) at WARNING. Helidon's own logging.properties discovery is switched
 * off so a stray file in the working directory cannot replace this set-up.
 */
public final class LoggingSetup {
    private static final String[] QUIET = {"io.helidon", "io.micrometer", "okhttp3", "io.kubernetes"};

    private LoggingSetup() {
    }

    /**
     * Installs the handler (replacing any previous root handlers).
     *
     * @param format line format
     * @param out    stream to write to
     * @return the installed handler
     */
    public static Handler configure(LogFormat format, OutputStream out) {
        System.setProperty("io.helidon.logging.config.disabled", "true");
        LogManager.getLogManager().reset();
        Logger root = Logger.getLogger("");
        Handler handler = new FlushingHandler(out, new LineFormatter(format));
        handler.setLevel(Level.ALL);
        root.addHandler(handler);
        root.setLevel(Level.INFO);
        for (String name : QUIET) {
            Logger.getLogger(name).setLevel(Level.WARNING);
        }
        Logger.getLogger("io.continuum").setLevel(Level.INFO);
        return handler;
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
