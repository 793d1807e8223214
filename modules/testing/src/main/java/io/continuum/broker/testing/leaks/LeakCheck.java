package io.continuum.broker.testing.leaks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Leak discipline for integration tests: before each test it records what the process holds (open
 * file descriptors, live threads including virtual ones, and any gauge the test registered with
 * {@link #expect}); after the test (after its {@code @AfterEach} methods) it waits, bounded, until all of it is
 * back to the baseline, and fails the test naming every leftover if it is not.
 * <pre>{@code
 * @ExtendWith(LeakCheck.class)            // defaults
 * class SomeIntegrationTest { ... }
 *
 * @RegisterExtension                       // or tuned
 * static final LeakCheck LEAKS = LeakCheck.builder().settle(Duration.ofSeconds(5)).ignoreThreads("my-pool-.*").build();
 * }</pre>
 * What counts:
 * <ul>
 *   <li>threads: every thread alive after the test that was not alive before it, except JVM and JDK pools
 *       ({@link #JDK_THREADS}) and the test's own ignore patterns;</li>
 *   <li>file descriptors: every descriptor number that is open after the test and was not open (or pointed
 *       elsewhere) before it, except class-path jars and JDK files, and anonymous inodes and pipes (the JDK's
 *       virtual-thread pollers create those lazily, once per JVM);</li>
 *   <li>gauges: each {@link #expect registered} value must equal its expected value (e.g. open HTTP/2 streams
 *       back to 0).</li>
 * </ul>
 * The wait polls with a deadline: resources are released by other threads (a connection's reader notices the
 * close, a pump exits) and there is nothing to join from here.
 */
public final class LeakCheck implements BeforeEachCallback, AfterEachCallback {
    /** JVM and JDK threads that come and go on their own; never a leak of the code under test. */
    public static final String JDK_THREADS = "ForkJoinPool.*|Common-Cleaner|Reference Handler|Finalizer"
            + "|Signal Dispatcher|Attach Listener|Notification Thread|process reaper.*|VirtualThread-unblocker"
            + "|VirtualThread-unparker|.*Poller.*|Cleaner-\\d+|InnocuousThread-\\d+|Keep-Alive-Timer"
            + "|surefire-.*|junit-.*|JFR .*|Monitor Deflation Thread|Sweeper thread|Service Thread"
            + "|HttpClient-\\d+-SelectorManager|Timer-\\d+";
    /**
     * Library threads that outlive their owner by design or by a known flaw, ignored by default: Helidon 4.5.0's
     * WebServer creates a daemon {@code java.util.Timer} per server ({@code helidon-idle-connection-timer}) and
     * never cancels it, so its thread ends only when the timer is garbage-collected; {@code helidon-http-timer}
     * is the same kind of timer. Test servers (routers, the observability server) leave one behind each.
     */
    public static final String LIBRARY_THREADS = "helidon-idle-connection-timer|helidon-http-timer";
    /** Descriptor targets that are not resources of the code under test. */
    private static final Pattern IGNORED_FDS = Pattern.compile(
            ".*\\.(jar|jmod|zip)|.*/lib/modules|/dev/(u)?random|/proc/.*|anon_inode:.*|pipe:.*");
    private static volatile boolean active;

    static {
        // The JDK's socket layer opens one descriptor of its own, once per JVM, the first time a socket is
        // closed (a socket pair it dup2()s over closing descriptors). Open and close a socket now, so that
        // descriptor is in every baseline instead of looking like the first test's leak.
        try (java.net.ServerSocket warmUp = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            warmUp.getLocalPort();
        } catch (java.io.IOException ignored) {
            // no loopback: the descriptor check will say so
        }
    }
    private static final List<Gauge> GAUGES = new CopyOnWriteArrayList<>();

    private final Duration settle;
    private final Pattern ignoredThreads;
    private final boolean checkFds;

    /** With the defaults: 10 s to settle, JDK threads ignored, descriptors checked. */
    public LeakCheck() {
        this(builder());
    }

    private LeakCheck(Builder b) {
        this.settle = b.settle;
        this.ignoredThreads = Pattern.compile(JDK_THREADS + "|" + LIBRARY_THREADS + (b.ignoredThreads.isEmpty() ? ""
                : "|" + String.join("|", b.ignoredThreads)));
        this.checkFds = b.checkFds;
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Registers a gauge that must read {@code expected} once the test is over (checked with the same bounded
     * wait). A no-op outside a test run by this extension, so fixtures may always call it.
     *
     * @param name     what it counts, for the failure message (e.g. "broker HTTP/2 streams in use")
     * @param value    reads the gauge
     * @param expected the value it must return to
     */
    public static void expect(String name, LongSupplier value, long expected) {
        if (active) {
            GAUGES.add(new Gauge(Objects.requireNonNull(name), Objects.requireNonNull(value), expected));
        }
    }

    /**
     * Thread names (whole-name regular expressions) that are not leaks of the code under test in the annotated
     * class, e.g. the threads of a test peer with a known flaw; say why next to it.
     */
    @java.lang.annotation.Target(java.lang.annotation.ElementType.TYPE)
    @java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.RUNTIME)
    @java.lang.annotation.Inherited
    public @interface IgnoreThreads {
        /** @return whole-name regular expressions */
        String[] value();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        GAUGES.clear();
        active = true;
        store(context).put(Baseline.class, baseline());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        active = false;
        Baseline before = store(context).remove(Baseline.class, Baseline.class);
        List<Gauge> gauges = List.copyOf(GAUGES);
        GAUGES.clear();
        if (before == null) {
            return;
        }
        Pattern ignored = ignoredThreads;
        IgnoreThreads extra = context.getTestClass().map(c -> c.getAnnotation(IgnoreThreads.class)).orElse(null);
        if (extra != null) {
            ignored = Pattern.compile(ignored.pattern() + "|" + String.join("|", extra.value()));
        }
        List<String> leftovers = awaitBaseline(before, gauges, settle, ignored);
        if (!leftovers.isEmpty()) {
            throw new AssertionError("not back to the baseline within " + settle.toMillis() + " ms after the test ("
                    + leftovers.size() + " leftovers):\n  " + String.join("\n  ", leftovers));
        }
    }

    /** @return what the process holds now */
    public Baseline baseline() {
        return new Baseline(checkFds ? Census.fileDescriptors() : Map.of(), Census.threads());
    }

    /**
     * Waits until the process is back to {@code before}.
     *
     * @param before the baseline
     * @param gauges gauges that must reach their expected values
     * @param wait   the bound
     * @return what is still left when the bound passed, one line each; empty when settled
     */
    public List<String> awaitBaseline(Baseline before, List<Gauge> gauges, Duration wait) {
        return awaitBaseline(before, gauges, wait, ignoredThreads);
    }

    private List<String> awaitBaseline(Baseline before, List<Gauge> gauges, Duration wait, Pattern ignored) {
        long deadline = System.nanoTime() + wait.toNanos();
        long pause = 10_000_000L;
        while (true) {
            List<String> leftovers = leftovers(before, gauges, ignored);
            if (leftovers.isEmpty() || System.nanoTime() > deadline) {
                return leftovers;
            }
            LockSupport.parkNanos(pause);
            pause = Math.min(pause * 2, 200_000_000L);
        }
    }

    /**
     * @param before the baseline
     * @param gauges gauges and their expected values
     * @return what differs from the baseline now, one line each
     */
    public List<String> leftovers(Baseline before, List<Gauge> gauges) {
        return leftovers(before, gauges, ignoredThreads);
    }

    private List<String> leftovers(Baseline before, List<Gauge> gauges, Pattern ignored) {
        List<String> out = new ArrayList<>();
        for (Gauge g : gauges) {
            long v = g.value().getAsLong();
            if (v != g.expected()) {
                out.add("gauge " + g.name() + " = " + v + ", expected " + g.expected());
            }
        }
        if (checkFds) {
            Census.fileDescriptors().forEach((fd, target) -> {
                if (!target.equals(before.fds().get(fd)) && !IGNORED_FDS.matcher(target).matches()) {
                    out.add("file descriptor " + fd + " -> " + target + Census.socketEnds(target));
                }
            });
        }
        Census.threads().forEach((tid, thread) -> {
            if (!before.threads().containsKey(tid) && !ignored.matcher(thread.name()).matches()
                    && thread.tid() != Thread.currentThread().threadId()) {
                out.add("thread " + thread.describe());
            }
        });
        return out;
    }

    private static ExtensionContext.Store store(ExtensionContext context) {
        return context.getStore(ExtensionContext.Namespace.create(LeakCheck.class, context.getUniqueId()));
    }

    /**
     * What the process held at one moment.
     *
     * @param fds     file descriptor number to link target
     * @param threads live threads by id
     */
    public record Baseline(Map<Integer, String> fds, Map<Long, Census.LiveThread> threads) {
    }

    /**
     * A value that must return to {@code expected}.
     *
     * @param name     what it counts
     * @param value    reads it
     * @param expected the value it must read after the test
     */
    public record Gauge(String name, LongSupplier value, long expected) {
    }

    /** Tunes a {@link LeakCheck} for {@code @RegisterExtension}. */
    public static final class Builder {
        private Duration settle = Duration.ofSeconds(10);
        private final List<String> ignoredThreads = new ArrayList<>();
        private boolean checkFds = true;

        private Builder() {
        }

        /**
         * @param bound how long leftovers may take to go away after the test
         */
        public Builder settle(Duration bound) {
            this.settle = Objects.requireNonNull(bound);
            return this;
        }

        /**
         * @param regex thread names (whole-name match) that are not leaks in this test class
         */
        public Builder ignoreThreads(String regex) {
            ignoredThreads.add(Pattern.compile(regex).pattern());
            return this;
        }

        /**
         * @param on whether to check file descriptors (only Linux has {@code /proc/self/fd})
         */
        public Builder fileDescriptors(boolean on) {
            this.checkFds = on;
            return this;
        }

        /** @return the extension */
        public LeakCheck build() {
            return new LeakCheck(this);
        }
    }
}
