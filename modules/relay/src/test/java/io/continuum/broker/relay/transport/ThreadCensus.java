package io.continuum.broker.relay.transport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Counts live threads, virtual ones included (the JDK's thread dump lists them; Thread.getAllStackTraces does
 * not), whose stack runs transport or Helidon client connection code; and open file descriptors.
 */
final class ThreadCensus {
    private ThreadCensus() {
    }

    /** @return threads currently inside the transport or Helidon's HTTP/2 client connection */
    static int transportThreads() {
        try {
            Path dir = Files.createTempDirectory("threads");
            Path file = dir.resolve("dump.json");
            // com.sun.management (jdk.management) reflectively: the relay module does not read it at compile time
            Class<?> beanType = Class.forName("com.sun.management.HotSpotDiagnosticMXBean");
            @SuppressWarnings({"unchecked", "rawtypes"})
            Object bean = ManagementFactory.getPlatformMXBean((Class) beanType);
            Class<?> formatType = Class.forName("com.sun.management.HotSpotDiagnosticMXBean$ThreadDumpFormat");
            Object jsonFormat = formatType.getField("JSON").get(null);
            beanType.getMethod("dumpThreads", String.class, formatType).invoke(bean, file.toString(), jsonFormat);
            String json = Files.readString(file);
            Files.delete(file);
            Files.delete(dir);
            int count = 0;
            for (String thread : json.split("\"tid\"")) {
                if (thread.contains("io.helidon.webclient.http2.Http2ClientConnection")
                        || thread.contains("io.continuum.broker.relay.transport.HelidonBus")
                        || thread.contains("\"bus-")) {
                    count++;
                }
            }
            return count;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("thread dump unavailable", e);
        }
    }

    /** @return open socket file descriptors of this process (Linux: /proc/self/fd links to socket:[inode]) */
    static long openSockets() {
        try (var list = Files.list(Path.of("/proc/self/fd"))) {
            return list.filter(fd -> {
                try {
                    return Files.readSymbolicLink(fd).toString().startsWith("socket:");
                } catch (IOException e) {
                    return false; // closed meanwhile
                }
            }).count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
