package io.continuum.broker.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The end-to-end load harness (not a test; docs/benchmarks-journal.md, "Performance"). One JVM runs the JeroMQ
 * publishers and subscribers and the in-process TLS HTTP/2 router; the broker (the production
 * {@code EventBroker} facade) runs alone in a child JVM ({@link BenchBroker}, {@link BrokerChild}) so its heap,
 * RSS and CPU are its own; stunnel4 runs as two child processes. Everything is on 127.0.0.1. Paths
 * ({@link Route}), side by side in one run:
 * <ul>
 *   <li>direct: PUB -> SUB over TCP;</li>
 *   <li>stunnel: PUB -> stunnel server -> TLS -> stunnel client -> SUB ({@link StunnelRoute});</li>
 *   <li>broker: PUB -> broker -> TLS HTTP/2 -> router -> bridge socket -> SUB ({@link BrokerRoute}).</li>
 * </ul>
 * The workloads are {@link Workloads}; {@link Report} runs them and prints the tables.
 */
public final class LoadHarness {
    static final String CREDENTIAL = "bench-credential-0123456789abcdef0123456789";
    static final String NAMESPACE = "dynamo";
    static final Duration WAIT = Duration.ofSeconds(20);
    static final int HEADER = 16; // seq (8) + send nanoTime (8)

    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    private LoadHarness() {
    }

    /**
     * Runs every workload and prints the results as Markdown.
     *
     * @param args {@code [runs]} (default 3, at most 9) and optionally {@code --quick}
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int runs = 3;
        boolean quick = false;
        for (String a : args) {
            if (a.equals("--quick")) {
                quick = true;
            } else {
                runs = Integer.parseInt(a);
            }
        }
        AtomicLong peakHeapUsed = new AtomicLong();
        Thread sampler = Thread.ofPlatform().daemon().name("heap-sampler").start(() -> sampleHeap(peakHeapUsed));
        long t0 = System.nanoTime();
        BenchBroker broker = new BenchBroker(Files.createTempDirectory("ceb-bench"));
        try {
            broker.start();
            new Report(Math.max(1, Math.min(runs, 9)), quick, broker, peakHeapUsed).runAll();
        } finally {
            broker.close();
            sampler.interrupt();
        }
        System.out.printf(Locale.ROOT, "harness wall time: %.1f s%n", (System.nanoTime() - t0) / 1e9);
        System.exit(0); // JeroMQ reaper threads of closed contexts are non-daemon
    }

    private static void sampleHeap(AtomicLong peakHeapUsed) {
        while (!Thread.currentThread().isInterrupted()) {
            peakHeapUsed.accumulateAndGet(MEMORY.getHeapMemoryUsage().getUsed(), Math::max);
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    static void log(String s) {
        System.err.println("[bench " + Instant.now() + "] " + s);
    }
}
