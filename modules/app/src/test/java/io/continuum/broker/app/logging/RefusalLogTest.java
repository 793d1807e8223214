package io.continuum.broker.app.logging;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.Logger;
import java.util.logging.StreamHandler;

import io.continuum.broker.app.config.LogFormat;
import io.continuum.broker.protocol.Code;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * R-SEC-11: refusal warnings are rate-limited per code in fixed 60 s windows; the next window's first
 * line carries the suppressed count.
 */
class RefusalLogTest {
    private final AtomicLong nanos = new AtomicLong(1_000);
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private Logger logger;
    private Handler handler;
    private RefusalLog log;

    @BeforeEach
    void setUp() {
        logger = Logger.getLogger("test.refusals." + System.identityHashCode(this));
        logger.setUseParentHandlers(false);
        handler = new StreamHandler(out, new LineFormatter(LogFormat.KEY_VALUE));
        logger.addHandler(handler);
        log = RefusalLog.create(logger, nanos::get);
    }

    @AfterEach
    void tearDown() {
        logger.removeHandler(handler);
    }

    private void advance(Duration d) {
        nanos.addAndGet(d.toNanos());
    }

    private List<String> lines() {
        handler.flush();
        return out.toString(StandardCharsets.UTF_8).lines()
                .map(l -> l.substring(l.indexOf("event=")))
                .toList();
    }

    @Test
    void firstOfEachWindowIsLoggedLaterOnesAreCountedAndReportedNextWindow() {
        assertEquals(true, log.refused(Code.TARGET_NOT_ALLOWED, "filtered"));
        advance(Duration.ofSeconds(1));
        assertEquals(false, log.refused(Code.TARGET_NOT_ALLOWED, "filtered"));
        advance(Duration.ofSeconds(58));
        assertEquals(false, log.refused(Code.TARGET_NOT_ALLOWED, "filtered"));
        advance(Duration.ofSeconds(1)); // 60 s after the window opened: it has closed
        assertEquals(true, log.refused(Code.TARGET_NOT_ALLOWED, "filtered"));
        advance(Duration.ofMinutes(5));
        assertEquals(true, log.refused(Code.TARGET_NOT_ALLOWED, "filtered"));
        assertEquals(List.of("event=stream_refused code=target_not_allowed message=filtered",
                             "event=stream_refused code=target_not_allowed suppressed=2 message=filtered",
                             "event=stream_refused code=target_not_allowed message=filtered"),
                     lines());
    }

    @Test
    void windowsArePerCode() {
        log.refused(Code.TARGET_NOT_ALLOWED, "a");
        log.refused(Code.TARGET_NOT_ADVERTISED, "b");
        log.refused(Code.TARGET_NOT_ALLOWED, "c");
        assertEquals(List.of("event=stream_refused code=target_not_allowed message=a",
                             "event=stream_refused code=target_not_advertised message=b"),
                     lines());
    }

    @Test
    void refusalsAreWarnings() {
        log.refused(Code.DRAINING, "x");
        handler.flush();
        assertEquals(true, out.toString(StandardCharsets.UTF_8).contains("level=warn"));
    }
}
