package io.continuum.broker.app.observe;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Prometheus's own {@code promtool} (Debian package {@code prometheus}) for the checks no Java library can
 * stand in for: the exposition parser and linter, the rule checker and the rule unit tests.
 *
 * <p>Without promtool on the PATH a check is skipped with a message, so {@code ./mvnw verify} works on a
 * developer machine that lacks it. Where the checks must run, they fail instead: when
 * {@code CEB_REQUIRE_PROMTOOL=1} is set ({@code .ci/run} sets it after installing the package) or the
 * {@code promtool.required} system property is {@code true}. A skipped alert test on CI would let a rule
 * that never fires reach production silently.
 */
final class Promtool {
    private Promtool() {
    }

    /** The promtool to use, or the test is skipped (locally) or failed (where it is required). */
    static Path require() {
        Optional<Path> found = find();
        if (found.isEmpty()) {
            String how = "promtool not found on PATH: install Debian's prometheus package"
                    + " (apt-get install -y --no-install-recommends prometheus)";
            if ("1".equals(System.getenv("CEB_REQUIRE_PROMTOOL"))
                    || Boolean.getBoolean("promtool.required")) {
                fail(how + "; it is required here (CEB_REQUIRE_PROMTOOL=1 or -Dpromtool.required=true)");
            }
            Assumptions.abort(how + " to run this check");
        }
        return found.get();
    }

    /**
     * Runs promtool and returns what it printed; fails the test on a non-zero exit.
     *
     * @param workDir directory to run in
     * @param stdin   bytes for its standard input, or null
     * @param args    arguments after the executable
     * @return combined output
     */
    static String run(Path workDir, byte[] stdin, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(require().toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true).start();
        if (stdin != null) {
            p.getOutputStream().write(stdin);
        }
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "promtool did not finish: " + command);
        if (p.exitValue() != 0) {
            fail("promtool " + String.join(" ", args) + " failed (exit " + p.exitValue() + "):\n" + out);
        }
        return out;
    }

    private static Optional<Path> find() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, "promtool");
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
