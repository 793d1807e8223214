package io.continuum.broker.app.observe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The alerting rules of {@code deploy/monitoring/prometheus-rules.yaml}: valid ({@code promtool check
 * rules}), each one unit-tested with series fixtures ({@code promtool test rules
 * deploy/monitoring/tests/*.yaml}) that see it fire, and each linking a runbook section of
 * {@code docs/troubleshooting.md} that exists. promtool is required on CI and skipped without it locally
 * ({@link Promtool}); the runbook and coverage checks need no promtool.
 */
class PrometheusRulesTest {
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent().getParent();
    private static final Path RULES = ROOT.resolve("deploy/monitoring/prometheus-rules.yaml");
    private static final Path TESTS = ROOT.resolve("deploy/monitoring/tests");
    private static final Path TROUBLESHOOTING = ROOT.resolve("docs/troubleshooting.md");
    private static final String RUNBOOK_BASE =
            "https://continuum.invalid/continuum-event-broker/docs/troubleshooting.md#";

    private static final Pattern ALERT = Pattern.compile("(?m)^\\s*- alert: (\\S+)\\s*$");
    private static final Pattern RUNBOOK = Pattern.compile("(?m)^\\s*runbook_url: \"([^\"]*)\"\\s*$");

    @Test
    void rulesPassPromtoolCheckRules() throws Exception {
        String out = Promtool.run(ROOT, null, "check", "rules", ROOT.relativize(RULES).toString());
        assertTrue(out.contains("SUCCESS: " + alerts().size() + " rules found"), out);
    }

    @Test
    void everyAlertFiresAndStaysQuietAsItsUnitTestsSay() throws Exception {
        List<String> args = new ArrayList<>(List.of("test", "rules"));
        testFiles().forEach(f -> args.add(ROOT.relativize(f).toString()));
        String out = Promtool.run(ROOT, null, args.toArray(String[]::new));
        assertFalse(out.contains("FAILED"), out);
    }

    /** Each alert has a test case that expects it to fire (not only cases where it stays quiet). */
    @Test
    void everyAlertHasAUnitTestThatSeesItFire() throws IOException {
        Set<String> firing = new TreeSet<>();
        Pattern testCase = Pattern.compile("(?m)^\\s*alertname: (\\S+)\\s*\\n\\s*exp_alerts:\\s*\\n\\s*- exp_labels:");
        for (Path f : testFiles()) {
            Matcher m = testCase.matcher(Files.readString(f));
            while (m.find()) {
                firing.add(m.group(1));
            }
        }
        assertEquals(new TreeSet<>(alerts().keySet()), firing, "alerts without a firing unit test (or tests of unknown alerts)");
    }

    @Test
    void everyAlertLinksARunbookSectionOfTroubleshootingThatExists() throws IOException {
        Set<String> anchors = anchors(Files.readString(TROUBLESHOOTING));
        Map<String, String> alerts = alerts();
        assertFalse(alerts.isEmpty());
        alerts.forEach((alert, block) -> {
            Matcher m = RUNBOOK.matcher(block);
            assertTrue(m.find(), alert + " has no annotations.runbook_url");
            String url = m.group(1);
            assertTrue(url.startsWith(RUNBOOK_BASE), alert + ": runbook_url outside docs/troubleshooting.md: " + url);
            String anchor = url.substring(RUNBOOK_BASE.length());
            assertTrue(anchors.contains(anchor), alert + ": no section #" + anchor + " in docs/troubleshooting.md"
                    + " (anchors: " + anchors + ")");
        });
    }

    /** Alert name to its block of the rule file (up to the next alert). */
    private static Map<String, String> alerts() throws IOException {
        String text = Files.readString(RULES);
        Map<String, String> blocks = new LinkedHashMap<>();
        Matcher m = ALERT.matcher(text);
        List<int[]> starts = new ArrayList<>();
        List<String> names = new ArrayList<>();
        while (m.find()) {
            starts.add(new int[] {m.start()});
            names.add(m.group(1));
        }
        for (int i = 0; i < names.size(); i++) {
            int end = i + 1 < starts.size() ? starts.get(i + 1)[0] : text.length();
            String previous = blocks.put(names.get(i), text.substring(starts.get(i)[0], end));
            assertEquals(null, previous, "alert defined twice: " + names.get(i));
        }
        return blocks;
    }

    private static List<Path> testFiles() throws IOException {
        try (Stream<Path> s = Files.list(TESTS)) {
            List<Path> files = s.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
            assertFalse(files.isEmpty(), "no rule tests in " + TESTS);
            return files;
        }
    }

    /** Explicit {@code <a id="...">} anchors and GitHub's heading slugs. */
    static Set<String> anchors(String markdown) {
        Set<String> anchors = new TreeSet<>();
        Matcher ids = Pattern.compile("<a id=\"([^\"]+)\"").matcher(markdown);
        while (ids.find()) {
            anchors.add(ids.group(1));
        }
        Matcher headings = Pattern.compile("(?m)^#{1,6} (.+)$").matcher(markdown);
        while (headings.find()) {
            anchors.add(headings.group(1).strip().toLowerCase(Locale.ROOT)
                                .replaceAll("[^a-z0-9 _-]", "").replace(' ', '-'));
        }
        return anchors;
    }
}
