package io.continuum.broker.event;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import io.continuum.broker.testing.logs.JsonLine;
import io.continuum.broker.testing.logs.Logfmt;
import io.continuum.broker.testing.logs.LogLines;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one formatter: fixed leading fields, typed values, logfmt that a strict parser (go-logfmt's grammar)
 * reads back exactly, JSON that Jackson reads back exactly, library records as {@code event=library}, and
 * causes as {@code error_class}/{@code error}/{@code stack_trace}. Values from outside cannot forge a field
 * or a line.
 */
class EventFormatterTest {
    private static final long T = 1_780_000_000_123L;
    private static final EventFormatter LOGFMT = new EventFormatter(EventFormatter.Style.LOGFMT, false);
    private static final EventFormatter JSON = new EventFormatter(EventFormatter.Style.JSON, true);

    /** Logs through a real EventLog and returns the record the handler saw, with a fixed time. */
    private static LogRecord record(java.util.function.Consumer<EventLog> site) {
        String name = "test.events." + System.nanoTime();
        List<LogRecord> seen = new ArrayList<>();
        java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
        logger.setUseParentHandlers(false);
        logger.setLevel(Level.ALL);
        java.util.logging.Handler h = new java.util.logging.Handler() {
            @Override
            public void publish(LogRecord r) {
                seen.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(h);
        try {
            site.accept(EventLog.named(name));
        } finally {
            logger.removeHandler(h);
        }
        assertEquals(1, seen.size());
        LogRecord r = seen.get(0);
        r.setMillis(T);
        r.setLoggerName("io.continuum.broker.relay");
        return r;
    }

    private static String line(EventFormatter f, LogRecord r) {
        String s = f.format(r);
        assertTrue(s.endsWith(System.lineSeparator()));
        String body = s.substring(0, s.length() - System.lineSeparator().length());
        assertFalse(body.contains("\n") || body.contains("\r"), body);
        assertTrue(body.chars().allMatch(c -> c >= 0x20 && c < 0x7f), "ASCII only: " + body);
        return body;
    }

    @Test
    void logfmtLine() {
        LogRecord r = record(log -> log.warn("stream_refused").field("code", "target_not_allowed")
                .field("suppressed", 3).field("message", "host \"evil\"\nlevel=error forged=1").log());
        assertEquals("ts=2026-05-28T20:26:40.123Z level=warn logger=io.continuum.broker.relay event=stream_refused"
                + " code=target_not_allowed suppressed=3"
                + " message=\"host \\\"evil\\\"\\nlevel=error forged=1\"", line(LOGFMT, r));
        Map<String, String> parsed = Logfmt.parse(line(LOGFMT, r));
        assertEquals(List.of("ts", "level", "logger", "event", "code", "suppressed", "message"),
                List.copyOf(parsed.keySet()));
        assertEquals("host \"evil\"\nlevel=error forged=1", parsed.get("message"));
    }

    @Test
    void jsonLineHasTypedValues() {
        LogRecord r = record(log -> log.info("session_welcomed").field("open_streams", 2).field("synced", true)
                .field("note", "a\tb").field("absent", (String) null).log());
        assertEquals("{\"ts\":\"2026-05-28T20:26:40.123Z\",\"level\":\"info\",\"logger\":\"io.continuum.broker.relay\","
                + "\"event\":\"session_welcomed\",\"open_streams\":2,\"synced\":true,\"note\":\"a\\tb\",\"absent\":null}",
                line(JSON, r));
        Map<String, Object> parsed = JsonLine.parse(line(JSON, r));
        assertEquals(2L, parsed.get("open_streams"));
        assertEquals(Boolean.TRUE, parsed.get("synced"));
        assertTrue(parsed.containsKey("absent"));
        assertNull(parsed.get("absent"));
    }

    @Test
    void libraryRecordsKeepLoggerAndMessage() {
        LogRecord r = new LogRecord(Level.SEVERE, "failed {0}");
        r.setParameters(new Object[] {"twice"});
        r.setMillis(T);
        r.setLoggerName("io.helidon.webserver");
        r.setThrown(new IOException("line1\nline2", new IllegalStateException("root")));
        assertEquals("ts=2026-05-28T20:26:40.123Z level=error logger=io.helidon.webserver event=library"
                + " msg=\"failed twice\" error_class=java.io.IOException"
                + " error=\"java.io.IOException: line1\\nline2; caused by java.lang.IllegalStateException: root\"",
                line(LOGFMT, r));
        Map<String, Object> json = JsonLine.parse(line(JSON, r));
        assertEquals("library", json.get("event"));
        assertEquals("io.helidon.webserver", json.get("logger"));
        assertEquals("failed twice", json.get("msg"));
        assertTrue(((String) json.get("stack_trace")).startsWith("java.io.IOException: line1\nline2\n\tat "),
                String.valueOf(json.get("stack_trace")));
    }

    @Test
    void stackTraceOnlyWhenAsked() {
        LogRecord r = record(log -> log.error("session_loop_failed").cause(new IllegalStateException("boom")).log());
        Map<String, String> plain = Logfmt.parse(line(LOGFMT, r));
        assertEquals("java.lang.IllegalStateException", plain.get("error_class"));
        assertEquals("java.lang.IllegalStateException: boom", plain.get("error"));
        assertFalse(plain.containsKey("stack_trace"));
        Map<String, String> debug = Logfmt.parse(line(new EventFormatter(EventFormatter.Style.LOGFMT, true), r));
        assertTrue(debug.get("stack_trace").contains("\tat io.continuum.broker.event.EventFormatterTest"),
                debug.get("stack_trace"));
    }

    @Test
    void levelWords() {
        assertEquals("error", Severity.of(Level.SEVERE).label());
        assertEquals("warn", Severity.of(Level.WARNING).label());
        assertEquals("info", Severity.of(Level.INFO).label());
        assertEquals("debug", Severity.of(Level.CONFIG).label());
        assertEquals("debug", Severity.of(Level.FINE).label());
        assertEquals("trace", Severity.of(Level.FINEST).label());
        for (Severity s : Severity.values()) {
            assertEquals(s, Severity.of(s.level()));
            assertEquals(s, Severity.parse(s.label()));
        }
    }

    /**
     * Hostile values (what a router can put in a drain reason or an unknown frame type: quotes, backslashes,
     * line breaks, {@code key=value} text, control and non-ASCII characters, lone surrogates) come back
     * exactly, as the one field they were given in, in both styles.
     */
    @Test
    void hostileValuesRoundTripAsOneField() {
        String alphabet = "a =\"\\\n\r\t\u0000\u001b\u007f\u0085\u00e9\u2028\u2029\ud83d\ude00\ud800\udfffevent=level=x";
        SplittableRandom random = new SplittableRandom(20261201L);
        for (int i = 0; i < 2000; i++) {
            StringBuilder sb = new StringBuilder();
            int len = random.nextInt(40);
            for (int k = 0; k < len; k++) {
                sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String hostile = sb.toString();
            LogRecord r = record(log -> log.info("drain").field("reason", hostile).field("deadline_ms", 5).log());
            Map<String, String> kv = Logfmt.parse(line(LOGFMT, r));
            assertEquals(List.of("ts", "level", "logger", "event", "reason", "deadline_ms"), List.copyOf(kv.keySet()));
            assertEquals("drain", kv.get("event"));
            assertEquals(hostile, kv.get("reason"));
            Map<String, Object> json = JsonLine.parse(line(JSON, r));
            assertEquals(List.of("ts", "level", "logger", "event", "reason", "deadline_ms"), List.copyOf(json.keySet()));
            assertEquals(hostile, json.get("reason"));
            assertEquals(5L, json.get("deadline_ms"));
        }
    }

    @Test
    void longValuesAreCutAndMarked() {
        LogRecord r = record(log -> log.info("drain").field("reason", "x".repeat(5000)).log());
        String reason = Logfmt.parse(line(LOGFMT, r)).get("reason");
        assertEquals("x".repeat(Event.MAX_VALUE_CHARS) + "...(3976 more chars)", reason);
    }

    @Test
    void fieldsShowThemselvesToHandlersThatPrintParameters() {
        LogRecord r = record(log -> log.info("config_loaded").field("client_id", "a b").field("n", 1).log());
        assertEquals("config_loaded", r.getMessage());
        assertEquals("client_id=\"a b\" n=1", String.valueOf(r.getParameters()[0]));
    }

    @Test
    void capturedLinesAreParsed() throws Exception {
        EventLog log = EventLog.named("test.capture." + System.nanoTime());
        try (LogLines lines = LogLines.capture(log.name(), LOGFMT, Level.INFO)) {
            log.info("stream_revoked").field("stream_id", 7).log();
            log.debug("unknown_frame").field("type", "x").log();
            String l = lines.await(s -> s.contains("stream_revoked"), java.time.Duration.ofSeconds(5));
            assertEquals("7", Logfmt.parse(l).get("stream_id"));
            assertEquals(1, lines.lines().size(), "debug is off at info");
        }
    }
}
