package io.continuum.broker.event;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every log site of the product goes through {@link EventLog}: no production source outside the app's
 * logging set-up touches java.util.logging, System.Logger or printStackTrace, so no line can bypass the
 * one formatter's fields and escaping.
 */
class NoStrayLoggingTest {
    private static final List<String> FORBIDDEN = List.of("java.util.logging", "System.Logger", "System.getLogger",
            "printStackTrace(");

    @Test
    void productionSourcesLogOnlyThroughTheEventApi() throws IOException {
        Path modules = Path.of("..").toAbsolutePath().normalize();
        List<String> offenders = new ArrayList<>();
        int scanned = 0;
        for (String module : List.of("bus-protocol", "metadata", "relay", "app")) {
            Path src = modules.resolve(module).resolve("src/main/java");
            assertTrue(Files.isDirectory(src), src.toString());
            try (Stream<Path> files = Files.walk(src)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    if (f.toString().replace('\\', '/').contains("/app/logging/")
                            || f.getFileName().toString().equals("module-info.java")) {
                        continue;
                    }
                    scanned++;
                    String text = Files.readString(f);
                    for (String s : FORBIDDEN) {
                        if (text.contains(s)) {
                            offenders.add(modules.relativize(f) + ": " + s);
                        }
                    }
                }
            }
        }
        assertTrue(scanned > 50, "scanned " + scanned + " files");
        assertEquals(List.of(), offenders);
    }

    /** Every event name a production source logs is a row of the events table in docs/operations.md. */
    @Test
    void everyEventIsDocumented() throws IOException {
        Path modules = Path.of("..").toAbsolutePath().normalize();
        String doc = Files.readString(modules.resolve("../docs/operations.md"));
        Pattern site = Pattern.compile("\\.(?:error|warn|info|debug|trace)\\(\\s*\"([a-z_0-9]+)\"\\s*\\)"
                + "|\\.at\\([^;]*?,\\s*\"([a-z_0-9]+)\"\\s*\\)");
        Set<String> names = new TreeSet<>();
        for (String module : List.of("metadata", "relay", "app")) {
            try (Stream<Path> files = Files.walk(modules.resolve(module).resolve("src/main/java"))) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    Matcher m = site.matcher(Files.readString(f));
                    while (m.find()) {
                        names.add(m.group(1) != null ? m.group(1) : m.group(2));
                    }
                }
            }
        }
        assertTrue(names.size() > 30, "found " + names);
        List<String> missing = names.stream().filter(n -> !doc.contains("| `" + n + "` |")).toList();
        assertEquals(List.of(), missing, "events missing from the table in docs/operations.md");
    }
}
