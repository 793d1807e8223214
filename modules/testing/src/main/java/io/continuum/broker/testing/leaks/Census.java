package io.continuum.broker.testing.leaks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.sun.management.HotSpotDiagnosticMXBean;

/**
 * What the process holds right now: open file descriptors ({@code /proc/self/fd}) and live threads, virtual ones
 * included (the JDK's JSON thread dump lists them; {@code Thread.getAllStackTraces} does not).
 */
public final class Census {
    private static final JsonFactory JSON = new JsonFactory();

    private Census() {
    }

    /**
     * A live thread.
     *
     * @param tid   thread id
     * @param name  thread name, empty for an unnamed virtual thread
     * @param stack the top 32 frames, innermost first
     */
    public record LiveThread(long tid, String name, List<String> stack) {
        /** @return the name, or the innermost frame of this project or a library for an unnamed thread */
        public String describe() {
            String top = stack.stream().filter(f -> !f.startsWith("java.base")).findFirst()
                    .orElse(stack.isEmpty() ? "?" : stack.getFirst());
            return (name.isEmpty() ? "<unnamed #" + tid + ">" : "\"" + name + "\" #" + tid) + " at " + top;
        }
    }

    /**
     * @return open file descriptors: number to link target ({@code socket:[123]}, a path, {@code pipe:[4]}...)
     */
    public static Map<Integer, String> fileDescriptors() {
        Map<Integer, String> fds = new TreeMap<>();
        try (var list = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : list.toList()) {
                try {
                    fds.put(Integer.parseInt(fd.getFileName().toString()), Files.readSymbolicLink(fd).toString());
                } catch (NoSuchFileException closedMeanwhile) {
                    // the directory stream's own descriptor, or one closed while listing
                } catch (IOException | NumberFormatException e) {
                    // unreadable: not ours to judge
                }
            }
        } catch (NoSuchFileException notLinux) {
            return Map.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return fds;
    }

    /**
     * @return every live thread, platform and virtual, keyed by thread id
     */
    public static Map<Long, LiveThread> threads() {
        try {
            Path dir = Files.createTempDirectory("census");
            Path file = dir.resolve("threads.json");
            try {
                ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                        .dumpThreads(file.toString(), HotSpotDiagnosticMXBean.ThreadDumpFormat.JSON);
                try (JsonParser parser = JSON.createParser(file.toFile())) {
                    Map<Long, LiveThread> threads = new TreeMap<>();
                    if (parser.nextToken() != null) {
                        collect(parser, threads);
                    }
                    return threads;
                }
            } finally {
                Files.deleteIfExists(file);
                Files.deleteIfExists(dir);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * For a descriptor target {@code socket:[inode]}, the TCP socket's ends and state as the kernel lists them
     * ({@code /proc/net/tcp} and {@code tcp6}), so a leaked socket says which connection it is.
     *
     * @param target a descriptor's target
     * @return {@code " (tcp 127.0.0.1:40123 -> 127.0.0.1:8443, state 01)"}, or empty when not found
     */
    public static String socketEnds(String target) {
        if (!target.startsWith("socket:[")) {
            return "";
        }
        String inode = target.substring("socket:[".length(), target.length() - 1);
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            try {
                for (String line : Files.readAllLines(Path.of(table))) {
                    String[] f = line.trim().split("\\s+");
                    if (f.length > 9 && f[9].equals(inode)) {
                        return " (tcp local port " + port(f[1]) + ", remote port " + port(f[2]) + ", state " + f[3]
                                + ")";
                    }
                }
            } catch (IOException | RuntimeException e) {
                // not Linux, or the table is gone: the inode alone is reported
            }
        }
        return "";
    }

    private static int port(String hexAddress) {
        return Integer.parseInt(hexAddress.substring(hexAddress.indexOf(':') + 1), 16);
    }

    /**
     * Every live thread, platform and virtual, with its stack, as the JDK's plain-text thread dump: what a test
     * prints when something stalled, so the run that failed says where each thread waited.
     */
    public static String threadDump() {
        try {
            Path dir = Files.createTempDirectory("census");
            Path file = dir.resolve("threads.txt");
            try {
                ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                        .dumpThreads(file.toString(), HotSpotDiagnosticMXBean.ThreadDumpFormat.TEXT_PLAIN);
                return Files.readString(file);
            } finally {
                Files.deleteIfExists(file);
                Files.deleteIfExists(dir);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Walks any JSON value; an object with a {@code tid} field is a thread. The parser is on the value's token. */
    private static void collect(JsonParser p, Map<Long, LiveThread> out) throws IOException {
        if (p.currentToken() == JsonToken.START_ARRAY) {
            while (p.nextToken() != JsonToken.END_ARRAY) {
                collect(p, out);
            }
        } else if (p.currentToken() == JsonToken.START_OBJECT) {
            String tid = null;
            String name = null;
            List<String> stack = List.of();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if (field.equals("tid") && value.isScalarValue()) {
                    tid = p.getValueAsString();
                } else if (field.equals("name") && value.isScalarValue()) {
                    name = p.getValueAsString();
                } else if (field.equals("stack") && value == JsonToken.START_ARRAY) {
                    List<String> frames = new ArrayList<>();
                    while (p.nextToken() != JsonToken.END_ARRAY) {
                        if (frames.size() < 32) {
                            frames.add(p.getValueAsString());
                        }
                    }
                    stack = frames;
                } else {
                    collect(p, out);
                }
            }
            if (tid != null) {
                long id = Long.parseLong(tid);
                out.put(id, new LiveThread(id, name == null ? "" : name, stack));
            }
        }
        // scalars: nothing to do
    }
}
