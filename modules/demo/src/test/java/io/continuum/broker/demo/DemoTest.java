package io.continuum.broker.demo;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's first command: the real broker (configured from a YAML file, metadata from an
 * in-process Kubernetes API through client-java, TLS HTTP/2 to an in-process router) relays real
 * ZMQ messages end to end, then drains and exits with status 0.
 */
class DemoTest {
    @Test
    @Timeout(120)
    void theDemoRelaysMessagesEndToEndAndExitsCleanly() throws Exception {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(captured, true, StandardCharsets.UTF_8);
        int status = new Demo(2, 50, 40, out).run();
        String text = captured.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, text);
        assertTrue(text.contains("router: broker session"), text);
        assertTrue(mostMessagesOnOneSubscriber(text) > 0, "messages arrived through the tunnel:\n" + text);
        assertTrue(text.contains("\"event_id\""), "the live view shows KV events:\n" + text);
    }

    /**
     * {@code demo --broker-launcher PATH}, the end-to-end check of a packaged broker: the broker is a process of
     * its own, reaches the demo's API server through {@code KUBECONFIG}, relays, and drains on SIGTERM. Here the
     * launcher starts this build's broker on the test class path.
     */
    @Test
    @Timeout(120)
    void aBrokerStartedByALauncherRelaysAndDrainsOnSigterm(@TempDir Path dir) throws Exception {
        Path launcher = dir.resolve("broker");
        Path log = dir.resolve("broker.log");
        // the child's output goes to its own file, not into this JVM's stdout (surefire's channel)
        Files.writeString(launcher, "#!/bin/sh\nexec '" + Path.of(System.getProperty("java.home"), "bin", "java")
                + "' -cp '" + System.getProperty("java.class.path") + "' io.continuum.broker.app.Main \"$@\" > '"
                + log + "' 2>&1\n");
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwx------"));
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(captured, true, StandardCharsets.UTF_8);
        int status = new Demo(2, 50, 40, out, launcher).run();
        String text = captured.toString(StandardCharsets.UTF_8) + "\nbroker.log:\n" + Files.readString(log);
        assertEquals(0, status, "the broker process drained and exited 0:\n" + text);
        assertTrue(text.contains("broker:") && text.contains("(pid "), text);
        assertTrue(text.contains("router: broker session"), text);
        assertTrue(mostMessagesOnOneSubscriber(text) > 0, "messages arrived through the tunnel:\n" + text);
    }

    /** The highest per-subscriber message count the live view printed ({@code 127.0.0.1:PORT: N msgs}). */
    private static long mostMessagesOnOneSubscriber(String liveView) {
        Matcher m = Pattern.compile("127\\.0\\.0\\.1:\\d+: (\\d+) msgs").matcher(liveView);
        long most = 0;
        while (m.find()) {
            most = Math.max(most, Long.parseLong(m.group(1)));
        }
        return most;
    }
}
