package io.continuum.broker.bench;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.ServerIdentity;

import static io.continuum.broker.bench.LoadHarness.CREDENTIAL;
import static io.continuum.broker.bench.LoadHarness.WAIT;
import static io.continuum.broker.bench.LoadHarness.log;

/**
 * The processes of the broker path: the in-process TLS HTTP/2 router in this JVM and the broker alone in a
 * child JVM ({@link BrokerChild}), so its heap, RSS and CPU are its own. The child is asked for its heap over
 * stdin; its CPU and RSS are read from /proc.
 */
final class BenchBroker implements AutoCloseable {
    private final EphemeralPki pki = EphemeralPki.create();
    private final ServerIdentity server = pki.localhostServer();
    private final Path work;
    private InProcessRouter router;
    private Process brokerProc;
    private Thread heartbeats;
    private BufferedWriter brokerIn;
    private BufferedReader brokerOut;
    private RouterSession session;
    private long nextStreamId = 1;

    BenchBroker(Path work) {
        this.work = work;
    }

    void start() throws IOException {
        router = InProcessRouter.builder()
                .tls(server.key(), List.of(server.certificate()))
                .credential(CREDENTIAL)
                .maxConcurrentStreams(4_096)
                .tcpNoDelay(!Boolean.getBoolean("bench.routerNagle"))
                // 64 MiB connection window (as the broker opens its own): with Helidon's 65,535 bytes one
                // withheld stream stalls every stream of the connection ("slow router", docs/benchmarks-journal.md)
                .connectionWindowIncrement(Integer.getInteger("bench.routerConnectionWindow", 64 << 20))
                .sessionPolicy(hello -> hello == null ? null
                        : InProcessRouter.SessionAnswer.welcome(-1, -1, 4_096, -1, -1))
                .start();
        Path ca = work.resolve("ca.pem");
        Files.write(ca, pki.caPem());
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(shippedJvmOptions());
        String extra = System.getProperty("bench.brokerJavaOpts", "");
        if (!extra.isBlank()) {
            cmd.addAll(Arrays.asList(extra.trim().split("\\s+")));
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), BrokerChild.class.getName(),
                router.url().toString(), ca.toString(), CREDENTIAL));
        brokerProc = new ProcessBuilder(cmd)
                .redirectError(work.resolve("broker.log").toFile())
                .start();
        brokerIn = brokerProc.outputWriter(StandardCharsets.UTF_8);
        brokerOut = brokerProc.inputReader(StandardCharsets.UTF_8);
        String first = brokerOut.readLine();
        // a profiler agent in the child (bench.brokerJavaOpts) may print a line of its own first
        for (int skipped = 0; first != null && !"started".equals(first) && skipped < 10; skipped++) {
            log("broker child: " + first);
            first = brokerOut.readLine();
        }
        if (!"started".equals(first)) {
            throw new IllegalStateException("broker child did not start: " + first + " (see " + work + "/broker.log)");
        }
        session = router.awaitSession(WAIT);
        // the test router sends no heartbeats of its own; without them the broker ends the session after its
        // 30 s idle timeout (bus-protocol-v1), which would cut every stream of a long run
        heartbeats = Thread.ofPlatform().daemon().name("router-heartbeats").start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(3_000);
                    session.send(new Frame.Heartbeat());
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    log("router heartbeat failed: " + e);
                    return;
                }
            }
        });
        log("broker child pid " + brokerProc.pid() + ", log " + work.resolve("broker.log"));
    }

    /**
     * The collector, heap and VM options the product ships with (packaging/jvm.options' -XX and -D lines; its
     * module options name the service's modules, which this class path does not have) in the chart's default
     * 512 MiB container ({@code bench.brokerMaxRam} for another), as bench/isolate.py runs the broker: the heap is
     * sized as in a cluster, 8 MiB at the start, not from this machine's memory.
     */
    static List<String> shippedJvmOptions() throws IOException {
        List<String> options = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("packaging", "jvm.options"))) {
            if (line.startsWith("-XX:") || line.startsWith("-D")) {
                options.add(line.strip());
            }
        }
        options.add("-XX:MaxRAM=" + System.getProperty("bench.brokerMaxRam", "512m"));
        return options;
    }

    InProcessRouter router() {
        return router;
    }

    /** The router's side of the broker's one session; null until {@link #start()} returned. */
    RouterSession session() {
        return session;
    }

    ServerIdentity server() {
        return server;
    }

    Path work() {
        return work;
    }

    /** Bus stream ids are never reused within the session. */
    long nextStreamId() {
        return nextStreamId++;
    }

    /** The broker child's heap: {used after GC, peak used before any collection (its GC notifications)}. */
    long[] heap() throws IOException {
        brokerIn.write("heap\n");
        brokerIn.flush();
        String[] parts = brokerOut.readLine().split(" ");
        return new long[]{Long.parseLong(parts[1]), Long.parseLong(parts[2])};
    }

    /** The broker child's CPU time (user + system) from /proc, in nanoseconds. */
    long cpuNanos() {
        try {
            String stat = Files.readString(Path.of("/proc/" + brokerProc.pid() + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L; // USER_HZ 100
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** A field of the broker child's /proc status, e.g. {@code VmHWM}; {@code ?} once it is gone. */
    String status(String field) {
        return Report.procStatus(Path.of("/proc/" + brokerProc.pid() + "/status"), field);
    }

    @Override
    public void close() {
        if (heartbeats != null) {
            heartbeats.interrupt();
        }
        if (brokerProc != null) {
            try {
                brokerIn.write("quit\n");
                brokerIn.flush();
                if (!brokerProc.waitFor(10, TimeUnit.SECONDS)) {
                    brokerProc.destroyForcibly();
                }
            } catch (IOException | InterruptedException e) {
                brokerProc.destroyForcibly();
            }
        }
        if (router != null) {
            router.close();
        }
    }
}
