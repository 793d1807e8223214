package io.continuum.broker.relay.hostile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Counts what a leak would leave behind: the broker's threads, virtual ones included (the JDK's
 * JSON thread dump lists them; {@code Thread.getAllStackTraces} does not), and this process's open
 * file descriptors (Linux {@code /proc/self/fd}).
 */
final class Census {
    private Census() {
    }

    /** @return live threads running relay or Helidon client code */
    static int brokerThreads() {
        int count = 0;
        for (String thread : threadDump().split("\"tid\"")) {
            if (thread.contains("io.continuum.broker.relay.session")
                    || thread.contains("io.continuum.broker.relay.target")
                    || thread.contains("io.continuum.broker.relay.transport")
                    || thread.contains("io.helidon.webclient")) {
                count++;
            }
        }
        return count;
    }

    /** @return open file descriptors of this process */
    static long openFds() {
        try (var list = Files.list(Path.of("/proc/self/fd"))) {
            return list.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String threadDump() {
        try {
            Path dir = Files.createTempDirectory("census");
            Path file = dir.resolve("threads.json");
            Class<?> beanType = Class.forName("com.sun.management.HotSpotDiagnosticMXBean");
            @SuppressWarnings({"unchecked", "rawtypes"})
            Object bean = ManagementFactory.getPlatformMXBean((Class) beanType);
            Class<?> formatType = Class.forName("com.sun.management.HotSpotDiagnosticMXBean$ThreadDumpFormat");
            Object json = formatType.getField("JSON").get(null);
            beanType.getMethod("dumpThreads", String.class, formatType).invoke(bean, file.toString(), json);
            String dump = Files.readString(file);
            Files.delete(file);
            Files.delete(dir);
            return dump;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("thread dump unavailable", e);
        }
    }
}
