package io.continuum.broker.demo;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.logs.JsonLine;
import io.continuum.broker.testing.logs.Logfmt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every line the broker writes is one event an operator's tools can parse. A real child JVM runs the real
 * {@code Main} against the in-process router and Kubernetes API through a session with a subscribe, a
 * refusal, a revocation, a router drain whose reason tries to forge fields and lines, and a SIGTERM. Every
 * line of its output is parsed with a strict logfmt parser (go-logfmt's grammar) and, with
 * {@code log_format: json}, with Jackson; each has {@code ts}, {@code level}, {@code logger} and
 * {@code event} first, the hostile reason comes back as exactly one field, and every event and field seen
 * is listed in docs/operations.md.
 */
class EventLinesTest extends ChildBrokerTest {
    private static final String CREDENTIAL = "event-lines-credential-0123456789abcdef";
    /** What a hostile router puts in a drain reason: quotes, a line break, fields and a whole forged line. */
    static final String HOSTILE = "rebalance\" event=forged forged=1 level=error\n"
            + "ts=2026-01-01T00:00:00Z level=error logger=x event=forged forged=2\r\\\" {\"forged\":3}\u2028";

    @Override
    String credential() {
        return CREDENTIAL;
    }

    @Test
    @Timeout(180)
    void everyLogfmtLineParsesAndTheDrainReasonForgesNothing() throws Exception {
        List<Map<String, String>> events = new ArrayList<>();
        for (String line : run("key_value")) {
            events.add(Logfmt.parse(line));
        }
        check(events, e -> e);
    }

    @Test
    @Timeout(180)
    void everyJsonLineParsesAndTheDrainReasonForgesNothing() throws Exception {
        List<Map<String, Object>> events = new ArrayList<>();
        for (String line : run("json")) {
            events.add(JsonLine.parse(line));
        }
        check(events, e -> {
            Map<String, String> m = new LinkedHashMap<>();
            e.forEach((k, v) -> m.put(k, v == null ? null : String.valueOf(v)));
            return m;
        });
        // Typed values stay typed in JSON.
        Map<String, Object> closed = events.stream().filter(e -> "stream_closed".equals(e.get("event"))).findFirst()
                .orElseThrow();
        assertEquals(1L, closed.get("stream_id"));
        Map<String, Object> welcomed = events.stream().filter(e -> "session_welcomed".equals(e.get("event")))
                .findFirst().orElseThrow();
        assertInstanceOf(Long.class, welcomed.get("heartbeat_ms"));
    }

    /** Runs the broker through the scenario and returns every line it wrote. */
    private List<String> run(String logFormat) throws Exception {
        String name = peers.kube.put("ns", DemoMetadata.resource("ns", 0, "dynamo", peers.publisher.port()));
        BrokerProcess.writeConfig(dir, peers.router.url().toString(), "event-lines",
                "drain_deadline: 5s",
                "log_format: " + logFormat);
        child = BrokerProcess.start(dir, peers.kube.kubeconfig());

        RouterSession session = peers.router.awaitSession(WAIT);
        // A subscribe that opens, and one the broker refuses (not advertised).
        session.subscribe(1, "dynamo", "127.0.0.1", peers.publisher.port());
        assertInstanceOf(Frame.StreamOpened.class, session.awaitAnswer(1, WAIT));
        try (Socket upstream = peers.publisher.awaitConnection()) {
            session.subscribe(3, "dynamo", "127.0.0.1", 1);
            assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(3, WAIT));
            // The resource goes away: the open stream is revoked.
            assertTrue(peers.kube.delete("ns", name));
            Frame.StreamClosed closed = session.await(Frame.StreamClosed.class, f -> f.streamId() == 1, WAIT);
            assertEquals(Code.TARGET_NOT_ADVERTISED, closed.code());
            // The router drains with a reason that tries to forge fields and lines.
            session.send(new Frame.Drain(HOSTILE, OptionalLong.of(1000)));
            assertTrue(session.awaitEnded(WAIT), "the drained session ends");
        }
        awaitLine("\"session_ended\"|event=session_ended");
        child.destroy(); // SIGTERM
        assertTrue(child.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS), log());
        assertEquals(0, child.exitValue(), log());
        List<String> lines = log().lines().toList();
        assertTrue(lines.size() > 10, log());
        return lines;
    }

    private <M extends Map<String, ?>> void check(List<M> parsed, java.util.function.Function<M, Map<String, String>> text)
            throws IOException {
        Map<String, Set<String>> documented = documentedEvents();
        List<String> seen = new ArrayList<>();
        for (M raw : parsed) {
            Map<String, String> e = text.apply(raw);
            assertEquals(List.of("ts", "level", "logger", "event"), List.copyOf(e.keySet()).subList(0, 4), e.toString());
            assertTrue(Set.of("error", "warn", "info", "debug", "trace").contains(e.get("level")), e.toString());
            String event = e.get("event");
            assertFalse(event.equals("forged") || e.containsKey("forged"), "a forged field: " + e);
            seen.add(event);
            if (event.equals("library")) {
                assertTrue(e.containsKey("msg"), e.toString());
                continue;
            }
            assertTrue(documented.containsKey(event), "event " + event + " is not in docs/operations.md: " + e);
            for (String key : e.keySet()) {
                if (!Set.of("ts", "level", "logger", "event", "error_class", "error", "stack_trace").contains(key)) {
                    assertTrue(documented.get(event).contains(key),
                            "field " + key + " of " + event + " is not in docs/operations.md: " + e);
                }
            }
        }
        for (String expected : List.of("config_loaded", "started", "runtime_started", "session_welcomed",
                "stream_refused", "stream_revoked", "stream_closed", "drain", "session_ended", "shutdown_requested",
                "stopped")) {
            assertTrue(seen.contains(expected), "no " + expected + " in " + seen);
        }
        Map<String, String> drain = parsed.stream().map(text).filter(e -> "drain".equals(e.get("event"))).findFirst()
                .orElseThrow();
        assertEquals(HOSTILE, drain.get("reason"), "the reason comes back whole, as one field");
        Map<String, String> refused = parsed.stream().map(text).filter(e -> "stream_refused".equals(e.get("event")))
                .findFirst().orElseThrow();
        assertEquals("target_not_advertised", refused.get("code"));
        assertEquals("3", refused.get("stream_id"));
        Map<String, String> ended = parsed.stream().map(text).filter(e -> "session_ended".equals(e.get("event")))
                .findFirst().orElseThrow();
        assertEquals("drained", ended.get("reason"));
    }

    /**
     * The events table of docs/operations.md: rows {@code | `name` | level | `field`, `field` | meaning |}.
     */
    static Map<String, Set<String>> documentedEvents() throws IOException {
        Path doc = Path.of("..", "..", "docs", "operations.md");
        Map<String, Set<String>> out = new LinkedHashMap<>();
        Pattern row = Pattern.compile("^\\| `([a-z_]+)` \\| (error|warn|info|debug|trace)[^|]*\\|([^|]*)\\|");
        Pattern code = Pattern.compile("`([a-z_.]+)`");
        for (String line : Files.readAllLines(doc, StandardCharsets.UTF_8)) {
            Matcher m = row.matcher(line);
            if (m.find()) {
                Set<String> fields = new LinkedHashSet<>();
                Matcher f = code.matcher(m.group(3));
                while (f.find()) {
                    fields.add(f.group(1));
                }
                out.put(m.group(1), fields);
            }
        }
        assertTrue(out.size() > 20, "the events table of " + doc + " has " + out.size() + " rows");
        return out;
    }

    private void awaitLine(String regex) throws Exception {
        Pattern p = Pattern.compile(regex);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!p.matcher(log()).find()) {
            assertTrue(System.nanoTime() < deadline, "no line matching " + regex + " in:\n" + log());
            assertTrue(child.isAlive(), log());
            Thread.sleep(50);
        }
    }

    private String log() {
        try {
            Path p = dir.resolve("broker.log");
            return Files.exists(p) ? Files.readString(p) : "";
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
