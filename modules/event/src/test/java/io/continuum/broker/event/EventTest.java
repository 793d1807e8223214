package io.continuum.broker.event;

import java.util.logging.Level;

import io.continuum.broker.testing.logs.LogLines;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The API's rules: names and keys are identifiers chosen by the code and are checked at every level, the
 * formatter's own keys cannot be given, a key cannot be given twice, and an event whose level is off is
 * not logged.
 */
class EventTest {
    private final EventLog log = EventLog.named("test.event." + System.nanoTime());

    @Test
    void badNamesAndKeysAreRejectedEvenWhenOff() {
        try (LogLines lines = LogLines.capture(log.name(), new EventFormatter(EventFormatter.Style.LOGFMT, false),
                Level.INFO)) {
            assertThrows(IllegalArgumentException.class, () -> log.info("Session ended"));
            assertThrows(IllegalArgumentException.class, () -> log.debug("x=y"));
            assertThrows(IllegalArgumentException.class, () -> log.info("ok").field("bad key", "v"));
            assertThrows(IllegalArgumentException.class, () -> log.debug("ok").field("a=b", 1));
            assertThrows(IllegalArgumentException.class, () -> log.debug("ok").field("Key", 1));
            assertThrows(IllegalArgumentException.class, () -> log.info("ok").field("a.", 1));
            for (String reserved : Event.RESERVED) {
                assertThrows(IllegalArgumentException.class, () -> log.info("ok").field(reserved, "v"));
            }
            assertThrows(IllegalArgumentException.class, () -> log.info("ok").field("stream_id", 1).field("stream_id", 2));
            log.info("ok").field("reconnect_backoff.initial", "1s").field("a_1", true).log();
            assertEquals(1, lines.lines().size());
        }
    }

    @Test
    void offEventsAreNotLoggedAndShareOneInstance() {
        try (LogLines lines = LogLines.capture(log.name(), new EventFormatter(EventFormatter.Style.LOGFMT, false),
                Level.WARNING)) {
            assertFalse(log.enabled(Severity.INFO));
            assertTrue(log.enabled(Severity.ERROR));
            assertSame(log.info("a"), log.info("b"));
            log.info("a").field("x", 1).cause(new RuntimeException()).log();
            log.debug("b").log();
            assertEquals(0, lines.lines().size());
            log.warn("c").log();
            assertEquals(1, lines.lines().size());
        }
    }
}
