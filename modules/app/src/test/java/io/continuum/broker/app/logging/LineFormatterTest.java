package io.continuum.broker.app.logging;

import java.io.IOException;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import io.continuum.broker.app.config.LogFormat;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Logging: one line per event, key=value by default, JSON with {@code log_format: json}; values from
 * outside cannot break a line.
 */
class LineFormatterTest {
    private static final long T = 1_780_000_000_123L;

    private static LogRecord event(Level level, String event, Object... kv) {
        LogRecord[] captured = new LogRecord[1];
        Logger logger = Logger.getAnonymousLogger();
        logger.setUseParentHandlers(false);
        logger.addHandler(new java.util.logging.Handler() {
            @Override
            public void publish(LogRecord r) {
                captured[0] = r;
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        });
        Events.log(logger, level, event, kv);
        captured[0].setMillis(T);
        captured[0].setLoggerName("io.continuum.broker.relay");
        return captured[0];
    }

    @Test
    void keyValueLine() {
        LogRecord r = event(Level.WARNING, "stream_refused", "code", "target_not_allowed", "suppressed", 3,
                            "message", "host \"evil\"\nlevel=error forged=1");
        assertEquals("ts=2026-05-28T20:26:40.123Z level=warn logger=io.continuum.broker.relay event=stream_refused"
                             + " code=target_not_allowed suppressed=3"
                             + " message=\"host \\\"evil\\\"\\nlevel=error forged=1\"" + System.lineSeparator(),
                     new LineFormatter(LogFormat.KEY_VALUE).format(r));
    }

    @Test
    void jsonLine() {
        LogRecord r = event(Level.INFO, "session_welcomed", "session_streams", 2, "synced", true, "note", "a\tb");
        assertEquals("{\"ts\":\"2026-05-28T20:26:40.123Z\",\"level\":\"info\",\"logger\":\"io.continuum.broker.relay\","
                             + "\"event\":\"session_welcomed\",\"session_streams\":2,\"synced\":true,\"note\":\"a\\tb\"}"
                             + System.lineSeparator(),
                     new LineFormatter(LogFormat.JSON).format(r));
    }

    @Test
    void plainJulRecordsAndCausesStayOnOneLine() {
        LogRecord r = new LogRecord(Level.SEVERE, "failed {0}");
        r.setParameters(new Object[] {"twice"});
        r.setMillis(T);
        r.setLoggerName("io.helidon.webserver");
        r.setThrown(new IOException("line1\nline2", new IllegalStateException("root")));
        assertEquals("ts=2026-05-28T20:26:40.123Z level=error logger=io.helidon.webserver msg=\"failed twice\""
                             + " error=\"java.io.IOException: line1\\nline2; caused by java.lang.IllegalStateException:"
                             + " root\"" + System.lineSeparator(),
                     new LineFormatter(LogFormat.KEY_VALUE).format(r));
    }

    @Test
    void levelNames() {
        assertEquals("error", LineFormatter.level(Level.SEVERE));
        assertEquals("warn", LineFormatter.level(Level.WARNING));
        assertEquals("info", LineFormatter.level(Level.INFO));
        assertEquals("debug", LineFormatter.level(Level.FINE));
        assertEquals("trace", LineFormatter.level(Level.FINEST));
    }
}
