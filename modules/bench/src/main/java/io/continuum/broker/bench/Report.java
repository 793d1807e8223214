package io.continuum.broker.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.continuum.broker.bench.Route.Kind;
import io.continuum.broker.bench.Workloads.Fanout;
import io.continuum.broker.bench.Workloads.Latency;
import io.continuum.broker.bench.Workloads.Slow;
import io.continuum.broker.bench.Workloads.Throughput;

import static io.continuum.broker.bench.LoadHarness.HEADER;
import static io.continuum.broker.bench.LoadHarness.log;
import static io.continuum.broker.bench.ZmqPairs.message;

/**
 * Runs the selected workloads ({@code bench.paths}, {@code bench.workloads}) and writes the results as Markdown
 * tables to {@code bench.out} and stdout, rewriting the file after each table so a cut run keeps what it had.
 */
final class Report {
    private final int runs;
    private final boolean quick;
    private final BenchBroker broker;
    private final ZmqPairs pairs;
    private final Workloads workloads;
    private final AtomicLong peakHeapUsed;
    private int printed;

    Report(int runs, boolean quick, BenchBroker broker, AtomicLong peakHeapUsed) {
        this.runs = runs;
        this.quick = quick;
        this.broker = broker;
        this.pairs = new ZmqPairs(broker);
        this.workloads = new Workloads(quick, broker, pairs);
        this.peakHeapUsed = peakHeapUsed;
    }

    void runAll() throws Exception {
        StringBuilder out = new StringBuilder();
        out.append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, ")
                .append(System.getProperty("java.vm.name")).append(' ').append(System.getProperty("java.version"))
                .append(", max heap ").append(mib(Runtime.getRuntime().maxMemory())).append(", ")
                .append(Instant.now()).append(", runs per cell: ").append(runs).append(quick ? " (quick)" : "")
                .append("\n\n");
        Kind[] kinds = Arrays.stream(Kind.values())
                .filter(k -> System.getProperty("bench.paths", "direct,stunnel,broker")
                        .contains(k.name().toLowerCase(Locale.ROOT)))
                .toArray(Kind[]::new);
        String selected = System.getProperty("bench.workloads", "latency,throughput,streams,slow");
        boolean all = kinds.length == Kind.values().length;
        // warm-up: one short latency run per path, discarded (JIT, TLS session set-up)
        for (Kind k : kinds) {
            workloads.latency(k);
            log("warm-up " + k + " done");
        }

        if (selected.contains("latency")) {
            latencyTable(kinds, all, out);
        }
        if (selected.contains("throughput")) {
            throughputTable(kinds, all, out);
        }
        if (selected.contains("streams")) {
            streamsTable(out);
        }
        if (selected.contains("slow")) {
            slowTable(out);
        }
        if (selected.contains("joins")) { // diagnostic, not in the default set
            int n = Integer.getInteger("bench.joins", 40);
            int failed = 0;
            for (int i = 0; i < n; i++) {
                try (ZmqPairs.Pair p = pairs.tryPair(Kind.BROKER)) {
                    p.pub().send(message(HEADER, 0));
                } catch (IllegalStateException e) {
                    failed++;
                    log("join " + i + " failed: " + broker.session().drainReceived());
                }
            }
            out.append("Broker subscriptions that did not join: ").append(failed).append(" of ").append(n).append("\n");
            flush(out);
        }
        long[] bh = broker.heap();
        out.append("Broker JVM (child, the shipped JVM options, -XX:MaxRAM=")
                .append(System.getProperty("bench.brokerMaxRam", "512m"))
                .append("): peak RSS (VmHWM) ").append(broker.status("VmHWM"))
                .append(", peak heap used (before any collection, garbage included) ").append(mib(bh[1]))
                .append(". Harness JVM (router, JeroMQ peers, bridges): peak RSS ").append(procStatus(Path.of("/proc/self/status"), "VmHWM"))
                .append(", peak heap used ").append(mib(peakHeapUsed.get())).append(". Subscriptions that never joined ")
                .append("within 20 s and were retried once: ").append(pairs.joinFailures()).append(".\n");
        flush(out);
    }

    private void latencyTable(Kind[] kinds, boolean all, StringBuilder out) throws Exception {
        // latency, interleaved by run so drift hits every path alike
        Map<Kind, List<Latency>> lat = new LinkedHashMap<>();
        for (int r = 0; r < runs; r++) {
            for (Kind k : kinds) {
                Latency l = workloads.latency(k);
                lat.computeIfAbsent(k, x -> new ArrayList<>()).add(l);
                log("latency " + k + " run " + r + ": " + l);
            }
        }
        out.append("### Latency: 200 B at 10,000 msg/s, end-to-end (µs), median of ").append(runs).append(" runs\n\n");
        out.append("| path | p50 | p99 | p99.9 | max | lost | added p50 over direct | added p99 over direct |\n");
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        Map<Kind, double[]> latMed = new LinkedHashMap<>();
        for (Kind k : kinds) {
            List<Latency> ls = lat.get(k);
            double[] m = {
                median(ls.stream().mapToDouble(Latency::p50).toArray()),
                median(ls.stream().mapToDouble(Latency::p99).toArray()),
                median(ls.stream().mapToDouble(Latency::p999).toArray()),
                median(ls.stream().mapToDouble(Latency::max).toArray()),
                ls.stream().mapToInt(Latency::lost).sum()};
            latMed.put(k, m);
        }
        double[] d = latMed.getOrDefault(Kind.DIRECT, new double[5]);
        for (Kind k : kinds) {
            double[] m = latMed.get(k);
            out.append("| ").append(k.name().toLowerCase(Locale.ROOT)).append(" | ").append(us(m[0])).append(" | ")
                    .append(us(m[1])).append(" | ").append(us(m[2])).append(" | ").append(us(m[3])).append(" | ")
                    .append((int) m[4]).append(" | ").append(us(m[0] - d[0])).append(" | ")
                    .append(us(m[1] - d[1])).append(" |\n");
        }
        out.append("\n");
        flush(out);
    }

    private void throughputTable(Kind[] kinds, boolean all, StringBuilder out) throws Exception {
        int[][] sizes = quick ? new int[][]{{4_096, 10_000}, {65_536, 800}} : new int[][]{{4_096, 25_000}, {65_536, 1_600}};
        out.append("### Throughput at full speed (512 KiB in flight), median of ").append(runs).append(" runs\n\n");
        out.append("| size | path | MiB/s | msg/s | lost | harness JVM CPU (cores) | broker JVM CPU (cores) ")
                .append("| broker ÷ direct | broker ÷ stunnel |\n");
        out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int[] sz : sizes) {
            Map<Kind, List<Throughput>> tp = new LinkedHashMap<>();
            for (int r = 0; r < runs; r++) {
                for (Kind k : kinds) {
                    Throughput t = workloads.throughput(k, sz[0], sz[1]);
                    tp.computeIfAbsent(k, x -> new ArrayList<>()).add(t);
                    log("throughput " + sz[0] + " " + k + " run " + r + ": " + t);
                }
            }
            Map<Kind, Double> mb = new LinkedHashMap<>();
            for (Kind k : kinds) {
                mb.put(k, median(tp.get(k).stream().mapToDouble(Throughput::mbPerSec).toArray()));
            }
            for (Kind k : kinds) {
                List<Throughput> ts = tp.get(k);
                out.append("| ").append(sz[0] / 1024).append(" KiB | ").append(k.name().toLowerCase(Locale.ROOT))
                        .append(" | ").append(f1(mb.get(k))).append(" | ")
                        .append(String.format(Locale.ROOT, "%.0f",
                                median(ts.stream().mapToDouble(Throughput::msgPerSec).toArray())))
                        .append(" | ").append(ts.stream().mapToInt(Throughput::lost).sum()).append(" | ")
                        .append(f2(median(ts.stream().mapToDouble(Throughput::cpuCores).toArray()))).append(" | ")
                        .append(k == Kind.BROKER
                                ? f2(median(ts.stream().mapToDouble(Throughput::brokerCores).toArray())) : "")
                        .append(" | ")
                        .append(k == Kind.BROKER && all ? f2(mb.get(k) / mb.get(Kind.DIRECT)) : "").append(" | ")
                        .append(k == Kind.BROKER && all ? f2(mb.get(k) / mb.get(Kind.STUNNEL)) : "")
                        .append(" |\n");
            }
        }
        out.append("\n");
        flush(out);
    }

    private void streamsTable(StringBuilder out) throws Exception {
        int n = quick ? 200 : 1_000;
        Fanout f = workloads.fanout(n);
        log("fanout: " + f);
        out.append("### ").append(n).append(" concurrent streams on one session, 10 msg/s each (broker)\n\n");
        out.append("| delivered / expected | open + join | broker CPU (cores) | broker heap after GC: before / ")
                .append("streams open / after load | broker heap per open stream: after the join / idle after the load ")
                .append("| broker peak heap used |\n")
                .append("|---|---:|---:|---|---:|---:|\n");
        out.append("| ").append(f.delivered()).append(" / ").append(f.expected()).append(" | ")
                .append(f1(f.openSeconds())).append(" s | ").append(f2(f.cpuCores())).append(" | ")
                .append(mib(f.heapBaseline())).append(" / ").append(mib(f.heapIdle())).append(" / ")
                .append(mib(f.heapAfterLoad())).append(" | ")
                .append(String.format(Locale.ROOT, "%.1f KiB / %.1f KiB", f.streamsIdleBytesEach() / 1024.0,
                        (f.heapAfterLoad() - f.heapBaseline()) / 1024.0 / f.streams())).append(" | ")
                .append(mib(f.peakHeap())).append(" |\n\n");
        flush(out);
    }

    private void slowTable(StringBuilder out) throws Exception {
        out.append("### Slow router: 4 flowing streams and 1 whose window is withheld (its router side stops ")
                .append("reading after the join), one PUB, 3 s\n\n");
        out.append("| messages | flowing streams: min delivered / sent | flowing p50 / p99 / p99.9 (µs) | withheld stream |\n")
                .append("|---|---:|---|---|\n");
        int[][] cases = {{65_536, 60}, {4_096, 1_000}};
        for (int[] c : cases) {
            Slow s = workloads.slowRouter(4, c[0], c[1]);
            log("slow " + c[0] + ": " + s);
            out.append("| ").append(c[0] / 1024).append(" KiB at ").append(c[1]).append(" msg/s | ")
                    .append(s.minDelivered()).append(" / ").append(s.expectedEach()).append(" | ")
                    .append(us(s.fastLatency().p50())).append(" / ").append(us(s.fastLatency().p99())).append(" / ")
                    .append(us(s.fastLatency().p999())).append(" | ").append(s.slowOutcome()).append(" |\n");
        }
        out.append("\n");
        flush(out);
    }

    private void flush(StringBuilder out) throws IOException {
        Path file = Path.of(System.getProperty("bench.out", "modules/bench/target/performance.md"));
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, out);
        System.out.print(out.substring(printed)); // the file is rewritten with everything so far
        System.out.flush();
        printed = out.length();
    }

    /** A field of a /proc status file, e.g. {@code VmHWM}; {@code ?} when the process is gone or not on Linux. */
    static String procStatus(Path statusFile, String field) {
        try {
            for (String line : Files.readAllLines(statusFile)) {
                if (line.startsWith(field + ":")) {
                    return line.substring(field.length() + 1).trim();
                }
            }
        } catch (IOException ignored) {
            // gone, or not Linux
        }
        return "?";
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static String us(double nanos) {
        return String.format(Locale.ROOT, "%.0f", nanos / 1000.0);
    }

    private static String f1(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    private static String f2(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }

    private static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
    }

}
