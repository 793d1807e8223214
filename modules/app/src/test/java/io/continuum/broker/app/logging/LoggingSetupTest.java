package io.continuum.broker.app.logging;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.continuum.broker.app.config.LogFormat;
import io.continuum.broker.app.config.LogLevel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code log_level} reaches the broker's loggers and Helidon's, OkHttp's and the Kubernetes client's.
 */
class LoggingSetupTest {
    private static final String[] LIBRARIES = {"io.helidon", "okhttp3", "io.kubernetes"};
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private Handler handler;

    @AfterEach
    void restore() {
        handler = LoggingSetup.configure(LogFormat.KEY_VALUE, LogLevel.INFO, System.err);
    }

    private String configure(LogLevel level) {
        out.reset();
        handler = LoggingSetup.configure(LogFormat.KEY_VALUE, level, out);
        Logger.getLogger("io.continuum.broker.relay.session").fine("a debug line of the broker");
        Logger.getLogger("io.helidon.webclient.http2").fine("a debug line of Helidon");
        Logger.getLogger("io.helidon.webserver").info("an info line of Helidon");
        Logger.getLogger("io.continuum.broker.app").warning("a warn line of the broker");
        handler.flush();
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void debugReachesTheBrokerAndTheLibraries() {
        String log = configure(LogLevel.DEBUG);
        assertTrue(log.contains("a debug line of the broker"), log);
        assertTrue(log.contains("a debug line of Helidon"), log);
        assertEquals(Level.FINE, Logger.getLogger("io.continuum").getLevel());
        for (String name : LIBRARIES) {
            assertEquals(Level.FINE, Logger.getLogger(name).getLevel(), name);
        }
    }

    @Test
    void infoKeepsTheLibrariesAtWarn() {
        String log = configure(LogLevel.INFO);
        assertFalse(log.contains("debug line"), log);
        assertFalse(log.contains("an info line of Helidon"), log);
        assertTrue(log.contains("a warn line of the broker"), log);
        assertEquals(Level.INFO, Logger.getLogger("io.continuum").getLevel());
        for (String name : LIBRARIES) {
            assertEquals(Level.WARNING, Logger.getLogger(name).getLevel(), name);
        }
    }

    @Test
    void errorSilencesWarnings() {
        String log = configure(LogLevel.ERROR);
        assertEquals("", log);
        for (String name : LIBRARIES) {
            assertEquals(Level.SEVERE, Logger.getLogger(name).getLevel(), name);
        }
    }

    @Test
    void theLevelsSurviveGarbageCollection() {
        // JUL holds loggers weakly; a level set on a logger nobody references would be lost.
        configure(LogLevel.WARN);
        System.gc();
        assertEquals(Level.WARNING, Logger.getLogger("io.continuum").getLevel());
    }
}
