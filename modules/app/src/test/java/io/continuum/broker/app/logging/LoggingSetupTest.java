package io.continuum.broker.app.logging;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.continuum.broker.app.config.LogFormat;
import io.continuum.broker.app.config.LogLevel;
import io.continuum.broker.event.EventLog;
import io.continuum.broker.testing.logs.JsonLine;
import io.continuum.broker.testing.logs.Logfmt;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The production set-up end to end: the broker's events and a library's records go through one handler
 * and one formatter; stack traces appear at debug and in JSON only; {@code log_level} reaches the
 * broker's loggers and Helidon's, OkHttp's and the Kubernetes client's (which stay at warn at info).
 */
class LoggingSetupTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private static final String[] LIBRARIES = {"io.helidon", "okhttp3", "io.kubernetes"};
    private final EventLog log = EventLog.named("io.continuum.broker.test");

    @AfterEach
    void tearDown() {
        java.util.logging.LogManager.getLogManager().reset();
    }

    private List<String> lines() {
        return out.toString(StandardCharsets.UTF_8).lines().toList();
    }

    private void logEverything() {
        log.debug("probe_debug").field("n", 1).log();
        log.error("probe_failed").cause(new IllegalStateException("boom")).log();
        Logger.getLogger("io.helidon.webserver.Probe").info("chatty library line");
        Logger.getLogger("io.helidon.webserver.Probe").warning("library \"warning\"\nsecond line");
    }

    @Test
    void infoKeepsDebugAndLibraryInfoOutAndStackTracesOff() {
        LoggingSetup.configure(LogFormat.KEY_VALUE, Level.INFO, out);
        logEverything();
        List<Map<String, String>> events = lines().stream().map(Logfmt::parse).toList();
        assertEquals(List.of("probe_failed", "library"), events.stream().map(e -> e.get("event")).toList(), lines().toString());
        assertEquals("java.lang.IllegalStateException", events.get(0).get("error_class"));
        assertFalse(events.get(0).containsKey("stack_trace"));
        assertEquals("io.helidon.webserver.Probe", events.get(1).get("logger"));
        assertEquals("library \"warning\"\nsecond line", events.get(1).get("msg"));
        assertEquals("warn", events.get(1).get("level"));
    }

    @Test
    void debugAddsDebugEventsAndStackTraces() {
        LoggingSetup.configure(LogFormat.KEY_VALUE, Level.FINE, out);
        logEverything();
        List<Map<String, String>> events = lines().stream().map(Logfmt::parse).toList();
        assertEquals(List.of("probe_debug", "probe_failed", "library"), events.stream().map(e -> e.get("event")).toList());
        assertTrue(events.get(1).get("stack_trace").startsWith("java.lang.IllegalStateException: boom\n\tat "),
                events.get(1).get("stack_trace"));
    }

    @Test
    void jsonAlwaysCarriesStackTraces() {
        LoggingSetup.configure(LogFormat.JSON, Level.INFO, out);
        logEverything();
        List<Map<String, Object>> events = lines().stream().map(JsonLine::parse).toList();
        assertEquals(2, events.size(), lines().toString());
        assertTrue(String.valueOf(events.get(0).get("stack_trace")).contains("LoggingSetupTest"));
    }

    private String configure(LogLevel level) {
        out.reset();
        Handler handler = LoggingSetup.configure(LogFormat.KEY_VALUE, level, out);
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
