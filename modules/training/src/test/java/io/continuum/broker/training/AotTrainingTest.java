package io.continuum.broker.training;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The training run against the real broker, started as lib/aot-train starts it: through a launcher script, in a JVM
 * of its own, with {@code -XX:AOTCacheOutput}. The script runs the broker's {@code Main} on this test's class path,
 * with each directory on it packed into a jar first (the JVM records no cache for classes loaded from a
 * directory, and refuses to write one).
 */
class AotTrainingTest {
    @TempDir
    static Path dir;
    private static Path launcher;

    @BeforeAll
    static void launcher() throws IOException {
        List<String> classPath = new ArrayList<>();
        int n = 0;
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            Path p = Path.of(entry);
            if (Files.isDirectory(p)) {
                Path jar = dir.resolve("dir-" + n++ + ".jar");
                pack(p, jar);
                classPath.add(jar.toString());
            } else if (Files.isRegularFile(p)) {
                classPath.add(entry);
            }
        }
        Files.writeString(dir.resolve("classpath"), String.join(":", classPath));
        launcher = script("broker", """
                #!/bin/sh
                # shellcheck disable=SC2086
                exec "%s" $CONTINUUM_EVENT_BROKER_JAVA_OPTS -Xmx256m -cp "$(cat "%s")" io.continuum.broker.app.Main "$@"
                """.formatted(Path.of(System.getProperty("java.home"), "bin", "java"), dir.resolve("classpath")));
    }

    @Test
    void theBrokerRelaysEveryLoadDrainsAndWritesItsCache() throws Exception {
        Path cache = dir.resolve("broker.aot");
        ByteArrayOutputStream progress = new ByteArrayOutputStream();

        AotTraining.Result r = AotTraining.run(launcher, cache, Duration.ofSeconds(2),
                new PrintStream(progress, true, StandardCharsets.UTF_8));

        assertEquals(0, r.exitStatus());
        assertEquals(1, r.sessions(), "one session: " + progress);
        for (Load load : Load.values()) {
            assertTrue(r.bytesByLoad().getOrDefault(load, 0L) >= load.bytes(), load + " relayed: " + r.bytesByLoad());
        }
        assertTrue(r.echoes().all().length > 0, "echo round trips are timed");
        assertTrue(r.brokerCpu().isPositive(), "the broker's CPU is read: " + r.brokerCpu());
        assertTrue(Files.size(cache) > 0, "the cache is written");
        assertTrue(progress.toString(StandardCharsets.UTF_8).contains("it relayed"), progress.toString());
    }

    @Test
    void aBrokerThatExitsAtOnceFailsTheRunWithItsOwnWords() throws Exception {
        Path refusing = script("refusing", """
                #!/bin/sh
                echo "event=config_invalid field=bus_url reason=\\"not today\\"" >&2
                exit 3
                """);

        AotTraining.TrainingFailed e = assertThrows(AotTraining.TrainingFailed.class, () -> AotTraining.run(
                refusing, dir.resolve("never.aot"), Duration.ofSeconds(1), new PrintStream(OutputStream.nullOutputStream())));

        assertTrue(e.getMessage().startsWith("the broker exited with status 3 before it opened a session"), e.getMessage());
        assertTrue(e.getMessage().contains("reason=\"not today\""), e.getMessage());
        assertTrue(Files.notExists(dir.resolve("never.aot")));
    }

    private static Path script(String name, String text) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }

    private static void pack(Path classes, Path jar) throws IOException {
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
             Stream<Path> files = Files.walk(classes)) {
            for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
                Files.copy(f, out);
                out.closeEntry();
            }
        }
    }
}
