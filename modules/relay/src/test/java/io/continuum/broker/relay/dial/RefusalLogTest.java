package io.continuum.broker.relay.dial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.continuum.broker.event.EventFormatter;
import io.continuum.broker.event.EventLog;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.testing.logs.Logfmt;

/**
 * Rate-limited refusal warnings (R-SEC 11): per code, fixed 60 s windows each opened by the first
 * refusal after the previous window closed; the first line of the next window carries the count
 * suppressed in the window before. Time comes from an injected clock, so no test waits.
 */
class RefusalLogTest {
    private static final long SECOND = 1_000_000_000L;

    private final AtomicLong now = new AtomicLong(123 * SECOND);
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private Logger logger;
    private Handler capture;
    private RefusalLog log;

    @BeforeEach
    void setUp() {
        logger = Logger.getLogger("test.refusals." + System.nanoTime());
        logger.setUseParentHandlers(false);
        capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                records.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(capture);
        log = new RefusalLog(EventLog.named(logger.getName()), now::get, Duration.ofSeconds(60));
    }

    @AfterEach
    void tearDown() {
        logger.removeHandler(capture);
    }

    private void at(long seconds) {
        now.set(123 * SECOND + seconds * SECOND);
    }

    /** Each record as the operator reads it (the broker's formatter), parsed, without ts, level and logger. */
    private List<Map<String, String>> lines() {
        EventFormatter f = new EventFormatter(EventFormatter.Style.LOGFMT, false);
        return records.stream().map(r -> {
            Map<String, String> kv = new LinkedHashMap<>(Logfmt.parse(f.format(r).strip()));
            kv.keySet().removeAll(List.of("ts", "level", "logger"));
            return (Map<String, String>) kv;
        }).toList();
    }

    /** {@code event=stream_refused} with these fields, in this order. */
    private static Map<String, String> refused(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("event", "stream_refused");
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    @Test
    void theFirstRefusalIsLoggedAsAKeyValueWarning() {
        assertTrue(log.refused(17, Code.TARGET_NOT_ALLOWED, "loopback"));

        assertEquals(List.of(refused("code", "target_not_allowed", "stream_id", "17", "reason", "loopback")), lines());
        assertEquals(Level.WARNING, records.getFirst().getLevel());
    }

    @Test
    void laterRefusalsInTheWindowAreCountedAndReportedByTheNextWindowsFirstLine() {
        at(0);
        log.refused(1, Code.TARGET_NOT_ALLOWED, "loopback");
        at(1);
        assertFalse(log.refused(2, Code.TARGET_NOT_ALLOWED, "link-local"));
        at(30);
        assertFalse(log.refused(3, Code.TARGET_NOT_ALLOWED, "loopback"));
        now.set(123 * SECOND + 60 * SECOND - 1);
        assertFalse(log.refused(4, Code.TARGET_NOT_ALLOWED, "loopback"));
        at(60);
        assertTrue(log.refused(5, Code.TARGET_NOT_ALLOWED, "multicast"));

        assertEquals(List.of(
                refused("code", "target_not_allowed", "stream_id", "1", "reason", "loopback"),
                refused("code", "target_not_allowed", "stream_id", "5", "reason", "multicast", "suppressed", "3")), lines());
    }

    @Test
    void windowsAreFixedNotExtendedByRefusalsInside() {
        at(0);
        log.refused(1, Code.UPSTREAM_CONNECT_FAILED, "connection refused");
        for (int s = 10; s < 60; s += 10) {
            at(s);
            log.refused(s, Code.UPSTREAM_CONNECT_FAILED, "connection refused");
        }
        at(60);
        assertTrue(log.refused(60, Code.UPSTREAM_CONNECT_FAILED, "connection refused"),
                "the window opened at 0 closes at 60 however busy it was");
        assertEquals(2, records.size());
        assertEquals("5", lines().get(1).get("suppressed"), lines().get(1).toString());
    }

    @Test
    void aNewWindowOpensAtTheFirstRefusalAfterTheLastOneClosed() {
        at(0);
        log.refused(1, Code.TARGET_NOT_ADVERTISED, "publisher not advertised");
        at(500);
        assertTrue(log.refused(2, Code.TARGET_NOT_ADVERTISED, "publisher not advertised"));
        at(530);
        assertFalse(log.refused(3, Code.TARGET_NOT_ADVERTISED, "publisher not advertised"),
                "the window opened at 500, not at a multiple of 60");
        at(559);
        assertFalse(log.refused(4, Code.TARGET_NOT_ADVERTISED, "publisher not advertised"));
        at(560);
        assertTrue(log.refused(5, Code.TARGET_NOT_ADVERTISED, "publisher not advertised"));

        assertFalse(lines().get(1).containsKey("suppressed"), "nothing was suppressed before it: " + lines().get(1));
        assertEquals("2", lines().get(2).get("suppressed"), lines().get(2).toString());
    }

    @Test
    void aRefusalIsLoggedWithItsCodeAndReason() {
        assertTrue(log.refused(21, Code.TARGET_NOT_ALLOWED, "loopback, link-local"));
        assertEquals(List.of(refused("code", "target_not_allowed", "stream_id", "21", "reason", "loopback, link-local")),
                lines());
    }

    @Test
    void eachCodeHasItsOwnWindow() {
        at(0);
        assertTrue(log.refused(1, Code.TARGET_NOT_ALLOWED, "loopback"));
        assertTrue(log.refused(2, Code.TARGET_NOT_ADVERTISED, "publisher not advertised"));
        assertFalse(log.refused(3, Code.TARGET_NOT_ALLOWED, "loopback"));
        assertTrue(log.refused(4, Code.DRAINING, "draining"));
        assertFalse(log.refused(5, Code.TARGET_NOT_ADVERTISED, "publisher not advertised"));

        assertEquals(3, records.size());
        assertEquals("target_not_allowed", lines().get(0).get("code"));
        assertEquals("target_not_advertised", lines().get(1).get("code"));
        assertEquals("draining", lines().get(2).get("code"));
    }

    @Test
    void reasonsAreQuotedAndCannotForgeFieldsOrLines() {
        log.refused(9, Code.UNSUPPORTED_TARGET, "invalid host: \"x\" code=ok\nevent=fake \\");
        log.refused(10, Code.TARGET_NOT_ALLOWED, null);
        log.refused(11, Code.TOO_MANY_STREAMS, "x".repeat(1000));

        assertEquals(refused("code", "unsupported_target", "stream_id", "9",
                "reason", "invalid host: \"x\" code=ok\nevent=fake \\"), lines().get(0));
        assertEquals(refused("code", "target_not_allowed", "stream_id", "10", "reason", ""), lines().get(1));
        assertEquals(RefusalLog.MAX_REASON_CHARS, lines().get(2).get("reason").length(), "long reasons are cut");
    }
}
