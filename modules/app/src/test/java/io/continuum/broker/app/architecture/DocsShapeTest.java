package io.continuum.broker.app.architecture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The two docs a newcomer reads first keep the shape that makes them readable: the architecture page is a
 * one-page map (the transport and the test peers have pages of their own), and the benchmarks page is a report
 * whose every target row says when its figure was measured (the dated record lives in the journal).
 */
class DocsShapeTest {
    private static final Path DOCS = Path.of("").toAbsolutePath().getParent().getParent().resolve("docs");
    private static final Pattern DATE = Pattern.compile("20\\d\\d-\\d\\d-\\d\\d");

    @Test
    void theArchitecturePageIsAOnePageMapWithShortPackageRows() throws IOException {
        List<String> lines = Files.readAllLines(DOCS.resolve("architecture.md"));
        assertTrue(lines.size() <= 180, "architecture.md has " + lines.size() + " lines; the map is about 150");
        List<String> longRows = lines.stream().filter(l -> l.startsWith("|") && l.length() > 260).toList();
        assertEquals(List.of(), longRows, "package rows of one or two lines (at most 260 characters)");
        assertTrue(Files.exists(DOCS.resolve("transport.md")) && Files.exists(DOCS.resolve("testing.md")));
    }

    @Test
    void theBenchmarksPageIsAReportWhoseFiguresAreDated() throws IOException {
        List<String> lines = Files.readAllLines(DOCS.resolve("benchmarks.md"));
        assertTrue(lines.size() <= 250, "benchmarks.md has " + lines.size() + " lines; the report is about 200");
        int section = lines.indexOf("## Where the targets stand");
        int end = lines.indexOf("## Commands");
        assertTrue(section >= 0 && end > section, "the status section comes first");
        List<String> undated = lines.subList(section, end).stream()
                .filter(l -> l.startsWith("| ") && !l.startsWith("| target") && !l.startsWith("| earlier target"))
                .filter(l -> !DATE.matcher(l).find())
                .toList();
        assertEquals(List.of(), undated, "every target row names the date of its latest figure");
        assertTrue(Files.readString(DOCS.resolve("benchmarks-journal.md")).contains("new entries go"),
                "the journal says where new measurements go");
    }
}
