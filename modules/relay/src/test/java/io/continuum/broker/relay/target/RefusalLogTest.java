package io.continuum.broker.relay.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.continuum.broker.protocol.Code;

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
        log = new RefusalLog(logger, now::get, Duration.ofSeconds(60));
    }

    @AfterEach
    void tearDown() {
        logger.removeHandler(capture);
    }

    private void at(long seconds) {
        now.set(123 * SECOND + seconds * SECOND);
    }

    private List<String> lines() {
        return records.stream().map(LogRecord::getMessage).toList();
    }

    @Test
    void theFirstRefusalIsLoggedAsAKeyValueWarning() {
        assertTrue(log.refused(17, Code.TARGET_NOT_ALLOWED, "loopback"));

        assertEquals(List.of("event=stream_refused code=target_not_allowed stream_id=17 reason=\"loopback\""), lines());
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
                "event=stream_refused code=target_not_allowed stream_id=1 reason=\"loopback\"",
                "event=stream_refused code=target_not_allowed stream_id=5 reason=\"multicast\" suppressed=3"), lines());
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
        assertTrue(lines().get(1).endsWith(" suppressed=5"), lines().get(1));
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

        assertFalse(lines().get(1).contains("suppressed"), "nothing was suppressed before it: " + lines().get(1));
        assertTrue(lines().get(2).endsWith(" suppressed=2"), lines().get(2));
    }

    @Test
    void aRefusalOutcomeIsLoggedWithItsCodeAndReason() {
        assertTrue(log.refused(21, new Outcome.Refused(Code.TARGET_NOT_ALLOWED, "loopback, link-local")));
        assertEquals(List.of("event=stream_refused code=target_not_allowed stream_id=21 reason=\"loopback, link-local\""),
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
        assertTrue(lines().get(0).contains("code=target_not_allowed"));
        assertTrue(lines().get(1).contains("code=target_not_advertised"));
        assertTrue(lines().get(2).contains("code=draining"));
    }

    @Test
    void reasonsAreQuotedAndCannotForgeFieldsOrLines() {
        log.refused(9, Code.UNSUPPORTED_TARGET, "invalid host: \"x\" code=ok\nevent=fake \\");
        log.refused(10, Code.TARGET_NOT_ALLOWED, null);
        log.refused(11, Code.TOO_MANY_STREAMS, "x".repeat(1000));

        assertEquals("event=stream_refused code=unsupported_target stream_id=9 "
                + "reason=\"invalid host: \\\"x\\\" code=ok?event=fake \\\\\"", lines().get(0));
        assertEquals("event=stream_refused code=target_not_allowed stream_id=10 reason=\"\"", lines().get(1));
        assertTrue(lines().get(2).length() < 400, "long reasons are cut");
    }
}
