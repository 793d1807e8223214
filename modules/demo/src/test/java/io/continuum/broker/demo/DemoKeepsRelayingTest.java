package io.continuum.broker.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.continuum.broker.testing.logs.Logfmt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Issue 53: the README's demo, run as a user runs it (its own JVM, {@code Demo.main}, Ctrl-C as SIGINT), relays for
 * as long as it is watched. With the router's welcome set to a 200 ms heartbeat and a 1 s idle timeout, the demo
 * runs past three idle timeouts without a session end and events still arrive (the router heartbeats); the user's
 * {@code r} resets the session from the router's side, the broker reconnects and the router subscribes again, so
 * events resume; SIGINT then drains the broker (it has started: not the start-up exit) and the demo exits 0.
 * Before: the router never sent a heartbeat (the session ended as {@code idle_timeout} every idle timeout), it
 * subscribed in the first session only, and SIGINT exited at once as {@code during=start-up}.
 */
class DemoKeepsRelayingTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** A live-view line: {@code [  12.0s]  127.0.0.1:PORT: N msgs (+k/s) last ...}. */
    private static final Pattern LIVE = Pattern.compile("^\\[\\s*([0-9.]+)s\\]\\s+127\\.0\\.0\\.1:\\d+: (\\d+) msgs");

    @TempDir
    Path dir;
    private Process demo;
    private final List<String> output = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        if (demo != null && demo.isAlive()) {
            demo.destroyForcibly().waitFor(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(180)
    void theDemoRelaysPastIdleTimeoutsResumesAfterAResetAndDrainsOnSigint() throws Exception {
        Path log = dir.resolve("demo.log");
        demo = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "io.continuum.broker.demo.Demo", "demo",
                "--publishers", "1", "--rate", "50", "--heartbeat-ms", "200", "--idle-timeout-ms", "1000"))
                .redirectError(log.toFile())
                .start();
        Thread.ofPlatform().daemon().name("demo-stdout").start(() -> readOutput(demo));

        // Events arrive, then keep arriving after three idle timeouts (3 s of the demo's clock) and more.
        Live first = awaitLive(l -> l.messages() > 0, "the first messages through the tunnel", log);
        Live later = awaitLive(l -> l.seconds() >= first.seconds() + 4, "four more seconds of the live view", log);
        awaitLive(l -> l.messages() > later.messages(), "messages after four idle timeouts", log);
        assertEquals(List.of(), events(log, "session_ended"), "no session ended while the router heartbeats");

        // The user resets the session from the router's side: the broker reconnects, the router subscribes again.
        try (OutputStream commands = demo.getOutputStream()) {
            commands.write("r\n".getBytes(StandardCharsets.UTF_8));
            commands.flush();
            awaitOutput(l -> l.startsWith("router: resetting session"), "the reset", log);
            awaitOutput(l -> sessionsSeen() == 2, "the router's second session", log);
            long atSecondSession = lastLive().messages();
            awaitLive(l -> l.messages() > atSecondSession, "messages through the second session", log);
        }
        List<Map<String, String>> ended = events(log, "session_ended");
        assertEquals(1, ended.size(), String.join("\n", Files.readAllLines(log)));
        assertEquals("router_closed", ended.getFirst().get("reason"));

        // Ctrl-C: the broker has started, so it drains and the demo exits 0.
        Process kill = new ProcessBuilder("kill", "-INT", Long.toString(demo.pid())).inheritIO().start();
        assertEquals(0, kill.waitFor());
        if (!demo.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)) {
            // what the demo and its broker were doing: their threads' stacks go to the demo's log
            String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
            for (ProcessHandle p : java.util.stream.Stream.concat(java.util.stream.Stream.of(demo.toHandle()),
                    demo.descendants()).toList()) {
                new ProcessBuilder(jcmd, Long.toString(p.pid()), "Thread.print").redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start()
                        .waitFor(30, TimeUnit.SECONDS);
            }
            fail("the demo exits after the drain\n" + String.join("\n", snapshot()) + "\n" + Files.readString(log));
        }
        String text = String.join("\n", snapshot()) + "\n" + Files.readString(log);
        assertEquals(0, demo.exitValue(), text);
        assertTrue(snapshot().contains("signal received: draining the broker..."), text);
        List<Map<String, String>> shutdown = events(log, "shutdown_requested");
        assertEquals(1, shutdown.size(), text);
        assertFalse(shutdown.getFirst().containsKey("during"), "not the start-up exit: " + text);
        assertEquals("shutdown", events(log, "session_ended").getLast().get("reason"), text);
        assertEquals(1, events(log, "stopped").size(), text);
        assertTrue(snapshot().contains("broker exited with status 0"), text);
    }

    private record Live(double seconds, long messages) {
    }

    private void readOutput(Process p) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                synchronized (output) {
                    output.add(line);
                    output.notifyAll();
                }
            }
        } catch (IOException ignored) {
            // the demo exited
        }
    }

    private List<String> snapshot() {
        synchronized (output) {
            return List.copyOf(output);
        }
    }

    private long sessionsSeen() {
        return snapshot().stream().filter(l -> l.startsWith("router: broker session ")).count();
    }

    private Live lastLive() {
        List<String> lines = snapshot();
        for (int i = lines.size() - 1; i >= 0; i--) {
            Matcher m = LIVE.matcher(lines.get(i));
            if (m.find()) {
                return new Live(Double.parseDouble(m.group(1)), Long.parseLong(m.group(2)));
            }
        }
        return new Live(0, 0);
    }

    private Live awaitLive(Predicate<Live> condition, String what, Path log) throws Exception {
        awaitOutput(l -> {
            Matcher m = LIVE.matcher(l);
            return m.find() && condition.test(new Live(Double.parseDouble(m.group(1)), Long.parseLong(m.group(2))));
        }, what, log);
        return lastLive();
    }

    /** Waits for an output line that matches, counting from the start of the output. */
    private void awaitOutput(Predicate<String> condition, String what, Path log) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        synchronized (output) {
            while (output.stream().noneMatch(condition)) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !demo.isAlive() && output.stream().noneMatch(condition)) {
                    throw new AssertionError("no " + what + " in the demo's output:\n" + String.join("\n", output)
                            + "\nlog:\n" + Files.readString(log));
                }
                output.wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 500)));
            }
        }
    }

    private static List<Map<String, String>> events(Path log, String event) throws IOException {
        // Complete lines only: the demo may be writing one.
        String text = Files.readString(log);
        return text.substring(0, text.lastIndexOf('\n') + 1).lines().map(Logfmt::parse)
                .filter(e -> event.equals(e.get("event"))).toList();
    }
}
