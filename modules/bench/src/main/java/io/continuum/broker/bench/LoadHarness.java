package io.continuum.broker.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.bus.RouterDataStream;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.ServerIdentity;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The load harness of issue 9 (not a test). One JVM runs the JeroMQ publishers and subscribers, the
 * in-process TLS HTTP/2 router; the broker (the production {@code EventBroker} facade) runs alone in a child
 * JVM ({@link BrokerChild}) so its heap, RSS and CPU are its own; stunnel4 runs as two child processes. Everything is on 127.0.0.1. Paths, side by side in one run:
 * <ul>
 *   <li>direct: PUB -> SUB over TCP;</li>
 *   <li>stunnel: PUB -> stunnel server -> TLS -> stunnel client -> SUB;</li>
 *   <li>broker: PUB -> broker -> TLS HTTP/2 -> router -> bridge socket -> SUB.</li>
 * </ul>
 * Every loop is bounded in count and in time. See docs/benchmarks.md, "Performance".
 */
public final class LoadHarness {
    static final String CREDENTIAL = "bench-credential-0123456789abcdef0123456789";
    static final String NAMESPACE = "dynamo";
    static final Duration WAIT = Duration.ofSeconds(20);
    static final int HEADER = 16; // seq (8) + send nanoTime (8)

    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    private final int runs;
    private final boolean quick;
    private final EphemeralPki pki = EphemeralPki.create();
    private final ServerIdentity server = pki.localhostServer();
    private final Path work;
    private InProcessRouter router;
    private Process brokerProc;
    private Thread heartbeats;
    private java.io.BufferedWriter brokerIn;
    private java.io.BufferedReader brokerOut;
    private RouterSession session;
    private long nextStreamId = 1;
    private final AtomicLong peakHeapUsed = new AtomicLong();

    private LoadHarness(int runs, boolean quick) throws IOException {
        this.runs = runs;
        this.quick = quick;
        this.work = Files.createTempDirectory("ceb-bench");
    }

    /**
     * Runs every workload and prints the results as Markdown.
     *
     * @param args {@code [runs]} (default 3) and optionally {@code --quick}
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
        LoadHarness h = new LoadHarness(Math.max(1, Math.min(runs, 9)), quick);
        Thread sampler = Thread.ofPlatform().daemon().name("heap-sampler").start(h::sampleHeap);
        long t0 = System.nanoTime();
        try {
            h.startBroker();
            h.runAll();
        } finally {
            h.stopBroker();
            sampler.interrupt();
        }
        System.out.printf(Locale.ROOT, "harness wall time: %.1f s%n", (System.nanoTime() - t0) / 1e9);
        System.exit(0); // JeroMQ reaper threads of closed contexts are non-daemon
    }

    private void sampleHeap() {
        while (!Thread.currentThread().isInterrupted()) {
            peakHeapUsed.accumulateAndGet(MEMORY.getHeapMemoryUsage().getUsed(), Math::max);
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // the broker and the router (same JVM)

    private void startBroker() throws IOException {
        router = InProcessRouter.builder()
                .tls(server.key(), List.of(server.certificate()))
                .credential(CREDENTIAL)
                .maxConcurrentStreams(4_096)
                .tcpNoDelay(!Boolean.getBoolean("bench.routerNagle"))
                // 64 MiB connection window (as the broker opens its own): with Helidon's 65,535 bytes one
                // withheld stream stalls every stream of the connection ("slow router", docs/benchmarks.md)
                .connectionWindowIncrement(Integer.getInteger("bench.routerConnectionWindow", 64 << 20))
                .sessionPolicy(hello -> hello == null ? null
                        : InProcessRouter.SessionAnswer.welcome(-1, -1, 4_096, -1, -1))
                .start();
        Path ca = work.resolve("ca.pem");
        Files.write(ca, pki.caPem());
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + System.getProperty("bench.brokerXmx", "512m"), "-XX:+UseG1GC"));
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

    /** The broker child's heap: {used after GC, peak used sampled every 20 ms}. */
    private long[] brokerHeap() throws IOException {
        brokerIn.write("heap\n");
        brokerIn.flush();
        String[] parts = brokerOut.readLine().split(" ");
        return new long[]{Long.parseLong(parts[1]), Long.parseLong(parts[2])};
    }

    /** The broker child's CPU time (user + system) from /proc, in nanoseconds. */
    private long brokerCpuNanos() {
        try {
            String stat = Files.readString(Path.of("/proc/" + brokerProc.pid() + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L; // USER_HZ 100
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    private String brokerStatus(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + brokerProc.pid() + "/status"))) {
                if (line.startsWith(field + ":")) {
                    return line.substring(field.length() + 1).trim();
                }
            }
        } catch (IOException ignored) {
            // gone
        }
        return "?";
    }

    private void stopBroker() {
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

    // ---------------------------------------------------------------------------------------------
    // paths

    /** Opens a way from a publisher port to an endpoint a SUB connects to; closed after each run. */
    interface Route extends AutoCloseable {
        String endpoint();

        @Override
        void close();
    }

    enum Kind {
        DIRECT, STUNNEL, BROKER
    }

    private Route open(Kind kind, int pubPort) throws Exception {
        return switch (kind) {
            case DIRECT -> new Route() {
                @Override
                public String endpoint() {
                    return "tcp://127.0.0.1:" + pubPort;
                }

                @Override
                public void close() {
                }
            };
            case STUNNEL -> new StunnelRoute(pubPort);
            case BROKER -> new BrokerRoute(pubPort, 1);
        };
    }

    /** A stunnel4 server (TLS, ephemeral certificate) in front of the publisher and a client for the SUB. */
    private final class StunnelRoute implements Route {
        private final Process serverProc;
        private final Process clientProc;
        private final int clientPort;

        StunnelRoute(int pubPort) throws Exception {
            Path cert = work.resolve("cert.pem");
            Path key = work.resolve("key.pem");
            if (!Files.exists(key)) {
                Files.write(cert, server.certificatePem());
                String pem = "-----BEGIN PRIVATE KEY-----\n"
                        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                        .encodeToString(server.key().getEncoded())
                        + "\n-----END PRIVATE KEY-----\n";
                Files.writeString(key, pem);
            }
            int serverPort = freePort();
            clientPort = freePort();
            Path sconf = work.resolve("server-" + serverPort + ".conf");
            Files.writeString(sconf, String.join("\n",
                    "foreground = yes", "pid =", "debug = 3",
                    "[bench-server]",
                    "accept = 127.0.0.1:" + serverPort,
                    "connect = 127.0.0.1:" + pubPort,
                    "cert = " + cert, "key = " + key,
                    "socket = l:TCP_NODELAY=1", "socket = r:TCP_NODELAY=1", ""));
            Path cconf = work.resolve("client-" + clientPort + ".conf");
            Files.writeString(cconf, String.join("\n",
                    "foreground = yes", "pid =", "debug = 3",
                    "[bench-client]", "client = yes",
                    "accept = 127.0.0.1:" + clientPort,
                    "connect = 127.0.0.1:" + serverPort,
                    "socket = l:TCP_NODELAY=1", "socket = r:TCP_NODELAY=1", ""));
            serverProc = stunnel(sconf);
            clientProc = stunnel(cconf);
            awaitListening(serverPort);
            awaitListening(clientPort);
        }

        private Process stunnel(Path conf) throws IOException {
            return new ProcessBuilder("stunnel4", conf.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(work.resolve(conf.getFileName() + ".log").toFile())
                    .start();
        }

        @Override
        public String endpoint() {
            return "tcp://127.0.0.1:" + clientPort;
        }

        @Override
        public void close() {
            for (Process p : List.of(clientProc, serverProc)) {
                p.destroy();
                try {
                    if (!p.waitFor(5, TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private static void awaitListening(int port) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        // "ss" would avoid the probe connection; a probe to stunnel is harmless (it closes at once)
        while (System.nanoTime() < deadline) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
                return;
            } catch (IOException notYet) {
                Thread.sleep(10);
            }
        }
        throw new IllegalStateException("stunnel did not listen on " + port);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /**
     * {@code count} subscriptions through the broker to one publisher port; each data stream is bridged to
     * its own accepted socket (one listener, accepted in order as each SUB connects).
     */
    private final class BrokerRoute implements Route {
        final long[] ids;
        final RouterDataStream[] streams;
        final PausableBridge[] bridges;
        final ServerSocket listener;
        private int accepted;

        BrokerRoute(int pubPort, int count) throws Exception {
            ids = new long[count];
            streams = new RouterDataStream[count];
            bridges = new PausableBridge[count];
            for (int i = 0; i < count; i++) {
                ids[i] = nextStreamId++;
                session.subscribe(ids[i], NAMESPACE, "127.0.0.1", pubPort);
            }
            for (int i = 0; i < count; i++) {
                Frame answer = session.awaitAnswer(ids[i], WAIT);
                if (!(answer instanceof Frame.StreamOpened)) {
                    throw new IllegalStateException("stream " + ids[i] + " not opened: " + answer);
                }
                streams[i] = router.awaitDataStream(ids[i], WAIT);
            }
            listener = new ServerSocket(0, count + 16, InetAddress.getLoopbackAddress());
            listener.setSoTimeout((int) WAIT.toMillis());
        }

        /** Call right after the i-th SUB connected to {@link #endpoint()}. */
        void acceptNext() throws IOException {
            Socket s = listener.accept();
            s.setTcpNoDelay(true);
            bridges[accepted] = new PausableBridge(streams[accepted], s);
            accepted++;
        }

        @Override
        public String endpoint() {
            return "tcp://127.0.0.1:" + listener.getLocalPort();
        }

        @Override
        public void close() {
            for (int i = 0; i < ids.length; i++) {
                session.unsubscribe(ids[i]);
                if (bridges[i] != null) {
                    bridges[i].close();
                }
            }
            try {
                listener.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    /** RouterDataStream.bridge, plus a switch that stops reading the router side (withholds the window). */
    static final class PausableBridge {
        final AtomicBoolean paused = new AtomicBoolean();
        private final Socket socket;
        private final Thread in;
        private final Thread out;

        PausableBridge(RouterDataStream stream, Socket socket) {
            this.socket = socket;
            InputStream fromBroker = stream.fromBroker();
            OutputStream toBroker = stream.toBroker();
            in = Thread.ofVirtual().name("bench-bridge-in").start(() -> {
                byte[] buf = new byte[64 * 1024];
                try (socket) {
                    OutputStream o = socket.getOutputStream();
                    while (true) {
                        while (paused.get()) {
                            Thread.sleep(5); // bounded by close(), which interrupts
                        }
                        int n = fromBroker.read(buf);
                        if (n < 0) {
                            break;
                        }
                        o.write(buf, 0, n);
                    }
                } catch (IOException | InterruptedException | RuntimeException ignored) {
                    // either side went away (Helidon throws RequestException once the stream is reset)
                }
            });
            out = Thread.ofVirtual().name("bench-bridge-out").start(() -> {
                byte[] buf = new byte[16 * 1024];
                try {
                    InputStream i = socket.getInputStream();
                    int n;
                    while ((n = i.read(buf)) >= 0) {
                        toBroker.write(buf, 0, n);
                        toBroker.flush();
                    }
                } catch (IOException | RuntimeException ignored) {
                    // either side went away
                }
            });
        }

        void close() {
            in.interrupt();
            out.interrupt();
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // plumbing for one PUB -> route -> SUB pair

    private static byte[] message(int size, long seq) {
        byte[] m = new byte[size];
        ByteBuffer.wrap(m).putLong(seq).putLong(System.nanoTime());
        return m;
    }

    private static long seqOf(byte[] m) {
        return ByteBuffer.wrap(m).getLong(0);
    }

    private static long sentAt(byte[] m) {
        return ByteBuffer.wrap(m).getLong(8);
    }

    /** PUB/SUB join asynchronously: publish markers (seq -1) until {@code subs} all saw one, then drain. */
    private static void join(ZMQ.Socket pub, List<ZMQ.Socket> subs) {
        boolean[] joined = new boolean[subs.size()];
        int left = subs.size();
        long deadline = System.nanoTime() + Long.getLong("bench.joinWaitMs", WAIT.toMillis()) * 1_000_000L;
        while (left > 0 && System.nanoTime() < deadline) {
            pub.send(message(HEADER, -1));
            sleepMillis(subs.size() > 1 ? 20 : 5);
            for (int i = 0; i < subs.size(); i++) {
                while (subs.get(i).recv(ZMQ.DONTWAIT) != null) {
                    if (!joined[i]) {
                        joined[i] = true;
                        left--;
                    }
                }
            }
        }
        if (left > 0) {
            throw new IllegalStateException(left + " of " + subs.size() + " subscribers never joined");
        }
        sleepMillis(100);
        for (ZMQ.Socket s : subs) {
            while (s.recv(ZMQ.DONTWAIT) != null) {
                // late markers
            }
        }
    }

    private static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void pace(long startNanos, long index, long intervalNanos) {
        long due = startNanos + index * intervalNanos;
        long now;
        while ((now = System.nanoTime()) < due) {
            long left = due - now;
            // park, never spin: on 2 cores a spinning pacer takes a core from the path under test. A park
            // overshoots by some 50 µs; the next messages then go at once (latency is measured from the
            // actual send stamp, and the mean rate holds)
            LockSupport.parkNanos(left);
        }
    }

    private ZMQ.Socket pub(ZContext ctx) {
        ZMQ.Socket pub = ctx.createSocket(SocketType.PUB);
        pub.setSndHWM(200_000);
        pub.setLinger(0);
        return pub;
    }

    private ZMQ.Socket sub(ZContext ctx, String endpoint) {
        ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
        sub.setRcvHWM(200_000);
        sub.setLinger(0);
        sub.subscribe(new byte[0]);
        sub.connect(endpoint);
        return sub;
    }

    private record Pair(ZContext ctx, ZMQ.Socket pub, ZMQ.Socket sub, Route route) implements AutoCloseable {
        @Override
        public void close() {
            route.close();
            ctx.close();
        }
    }

    private Pair pair(Kind kind) throws Exception {
        try {
            return tryPair(kind);
        } catch (IllegalStateException e) {
            // counted and reported: a failed join is retried once with fresh sockets
            joinFailures.incrementAndGet();
            log(e.getMessage() + "; router saw: " + (session == null ? "" : session.drainReceived()) + "; retrying");
            return tryPair(kind);
        }
    }

    private final AtomicLong joinFailures = new AtomicLong();

    private Pair tryPair(Kind kind) throws Exception {
        ZContext ctx = new ZContext(1);
        ZMQ.Socket pub = pub(ctx);
        int port = pub.bindToRandomPort("tcp://127.0.0.1");
        Route route = open(kind, port);
        ZMQ.Socket sub = sub(ctx, route.endpoint());
        if (route instanceof BrokerRoute b) {
            b.acceptNext();
        }
        try {
            join(pub, List.of(sub));
        } catch (IllegalStateException e) {
            route.close();
            ctx.close();
            throw new IllegalStateException(kind + ": " + e.getMessage(), e);
        }
        return new Pair(ctx, pub, sub, route);
    }

    // ---------------------------------------------------------------------------------------------
    // workloads

    record Latency(long p50, long p99, long p999, long max, int lost) {
    }

    /** 200-byte messages at 10k msg/s: warm-up, then the measured messages; latency from the payload stamp. */
    private Latency latency(Kind kind) throws Exception {
        int rate = 10_000;
        int warm = quick ? 2_000 : 10_000;
        int measured = quick ? 10_000 : 30_000;
        int total = warm + measured;
        long interval = 1_000_000_000L / rate;
        try (Pair p = pair(kind)) {
            long[] lat = new long[measured];
            AtomicLong got = new AtomicLong();
            p.sub.setReceiveTimeOut(200);
            long deadline = System.nanoTime() + Duration.ofSeconds(total / rate + 15).toNanos();
            Thread rx = Thread.ofPlatform().name("rx").start(() -> {
                int n = 0;
                while (n < total && System.nanoTime() < deadline) {
                    byte[] m = p.sub.recv();
                    long now = System.nanoTime();
                    if (m == null) {
                        continue;
                    }
                    long seq = seqOf(m);
                    if (seq < 0) {
                        continue;
                    }
                    n++;
                    if (seq >= warm && seq < total) {
                        lat[(int) (seq - warm)] = now - sentAt(m);
                        got.incrementAndGet();
                    }
                }
            });
            long start = System.nanoTime();
            for (int i = 0; i < total; i++) {
                pace(start, i, interval);
                p.pub.send(message(200, i));
            }
            rx.join(Duration.ofSeconds(20));
            int received = (int) got.get();
            long[] s = Arrays.stream(lat).filter(v -> v > 0).sorted().toArray();
            if (s.length == 0) {
                return new Latency(-1, -1, -1, -1, measured);
            }
            return new Latency(pct(s, 0.50), pct(s, 0.99), pct(s, 0.999), s[s.length - 1], measured - received);
        }
    }

    private static long pct(long[] sorted, double q) {
        return sorted[(int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    }

    record Throughput(double mbPerSec, double msgPerSec, int lost, double cpuCores, double brokerCores) {
    }

    /**
     * {@code count} messages of {@code size} as fast as the path takes them, with at most {@code window}
     * bytes in flight between the PUB send and the SUB receive (the same for every path). Without a window
     * a PUB outruns any tunnel: ZMQ then drops at the high-water mark, and the broker (which reads its
     * publisher continuously, R-BUF 4) resets the stream with buffer_overflow once 1 MiB is queued.
     */
    private Throughput throughput(Kind kind, int size, int count) throws Exception {
        long window = 512 * 1024;
        try (Pair p = pair(kind)) {
            AtomicLong recvBytes = new AtomicLong();
            AtomicLong recvCount = new AtomicLong();
            AtomicLong lastRecv = new AtomicLong();
            p.sub.setReceiveTimeOut(200);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            Thread rx = Thread.ofPlatform().name("rx").start(() -> {
                while (recvCount.get() < count && System.nanoTime() < deadline) {
                    byte[] m = p.sub.recv();
                    if (m == null || seqOf(m) < 0) {
                        continue;
                    }
                    recvBytes.addAndGet(m.length);
                    recvCount.incrementAndGet();
                    lastRecv.set(System.nanoTime());
                }
            });
            long cpu0 = processCpuNanos();
            long bcpu0 = brokerCpuNanos();
            long start = System.nanoTime();
            long sent = 0;
            for (int i = 0; i < count && System.nanoTime() < deadline; i++) {
                while (sent - recvBytes.get() > window - size && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                    LockSupport.parkNanos(20_000);
                }
                p.pub.send(message(size, i));
                sent += size;
            }
            rx.join(Duration.ofSeconds(35));
            long end = recvCount.get() > 0 ? lastRecv.get() : System.nanoTime();
            long cpu = processCpuNanos() - cpu0;
            long bcpu = brokerCpuNanos() - bcpu0;
            double secs = (end - start) / 1e9;
            return new Throughput(recvBytes.get() / 1048576.0 / secs, recvCount.get() / secs,
                    (int) (count - recvCount.get()), cpu / 1e9 / secs, bcpu / 1e9 / secs);
        }
    }

    record Fanout(int streams, long expected, long delivered, double cpuCores, double openSeconds,
                  long heapBaseline, long heapIdle, long heapAfterLoad, long streamsIdleBytesEach, long peakHeap) {
    }

    /** 1,000 streams through one session (one PUB, 1,000 SUBs behind the router) at 10 msg/s each. */
    private Fanout fanout(int streams) throws Exception {
        int perStream = quick ? 50 : 100;
        long interval = 100_000_000L; // 10 msg/s
        long baseline = brokerHeap()[0];
        try (ZContext ctx = new ZContext(1)) {
            ZMQ.Socket pub = pub(ctx);
            int port = pub.bindToRandomPort("tcp://127.0.0.1");
            long t0 = System.nanoTime();
            BrokerRoute route = new BrokerRoute(port, streams);
            List<ZMQ.Socket> subs = new ArrayList<>();
            try {
                for (int i = 0; i < streams; i++) {
                    subs.add(sub(ctx, route.endpoint()));
                    route.acceptNext();
                }
                join(pub, subs);
                double openSeconds = (System.nanoTime() - t0) / 1e9;
                long idle = brokerHeap()[0];
                ZMQ.Poller poller = ctx.createPoller(streams);
                for (ZMQ.Socket s : subs) {
                    poller.register(s, ZMQ.Poller.POLLIN);
                }
                long expected = (long) streams * perStream;
                long[] perSub = new long[streams];
                AtomicLong delivered = new AtomicLong();
                long deadline = System.nanoTime() + Duration.ofSeconds(perStream / 10 + 20).toNanos();
                Thread rx = Thread.ofPlatform().name("rx-fanout").start(() -> {
                    while (delivered.get() < expected && System.nanoTime() < deadline) {
                        if (poller.poll(100) <= 0) {
                            continue;
                        }
                        for (int i = 0; i < streams; i++) {
                            if (poller.pollin(i)) {
                                byte[] m;
                                while ((m = subs.get(i).recv(ZMQ.DONTWAIT)) != null) {
                                    if (seqOf(m) >= 0) {
                                        perSub[i]++;
                                        delivered.incrementAndGet();
                                    }
                                }
                            }
                        }
                    }
                });
                long cpu0 = brokerCpuNanos();
                long start = System.nanoTime();
                for (int i = 0; i < perStream; i++) {
                    pace(start, i, interval);
                    pub.send(message(200, i));
                }
                rx.join(Duration.ofSeconds(30));
                double secs = (System.nanoTime() - start) / 1e9;
                double cpu = (brokerCpuNanos() - cpu0) / 1e9 / secs;
                long[] heap = brokerHeap();
                poller.close();
                return new Fanout(streams, expected, delivered.get(), cpu, openSeconds, baseline, idle, heap[0],
                        (idle - baseline) / streams, heap[1]);
            } finally {
                route.close();
            }
        }
    }

    record Slow(int fast, long expectedEach, long minDelivered, Latency fastLatency, String slowOutcome,
                long slowClosedAfterMs) {
    }

    /**
     * One PUB, {@code fast} flowing streams and one whose router side stops reading after the join (its
     * HTTP/2 window is withheld): {@code size}-byte messages at {@code rate} msg/s for 3 s.
     */
    private Slow slowRouter(int fast, int size, int rate) throws Exception {
        int total = quick ? rate * 3 / 2 : rate * 3;
        long interval = 1_000_000_000L / rate;
        try (ZContext ctx = new ZContext(1)) {
            ZMQ.Socket pub = pub(ctx);
            int port = pub.bindToRandomPort("tcp://127.0.0.1");
            BrokerRoute route = new BrokerRoute(port, fast + 1);
            try {
                List<ZMQ.Socket> subs = new ArrayList<>();
                for (int i = 0; i <= fast; i++) {
                    subs.add(sub(ctx, route.endpoint()));
                    route.acceptNext();
                }
                join(pub, subs);
                // the slow one (-Dbench.slowWithhold=false: the same load with all 5 flowing, a capacity control)
                route.bridges[fast].paused.set(!"false".equals(System.getProperty("bench.slowWithhold")));
                long slowId = route.ids[fast];
                long[][] lat = new long[fast][total];
                long[] count = new long[fast];
                long deadline = System.nanoTime() + Duration.ofSeconds(total / rate + 15).toNanos();
                ZMQ.Poller poller = ctx.createPoller(fast);
                for (int i = 0; i < fast; i++) {
                    poller.register(subs.get(i), ZMQ.Poller.POLLIN);
                }
                Thread rx = Thread.ofPlatform().name("rx-slow").start(() -> {
                    while (Arrays.stream(count).sum() < (long) fast * total && System.nanoTime() < deadline) {
                        if (poller.poll(100) <= 0) {
                            continue;
                        }
                        for (int i = 0; i < fast; i++) {
                            if (poller.pollin(i)) {
                                byte[] m;
                                while ((m = subs.get(i).recv(ZMQ.DONTWAIT)) != null) {
                                    long now = System.nanoTime();
                                    long seq = seqOf(m);
                                    if (seq >= 0 && seq < total) {
                                        lat[i][(int) seq] = now - sentAt(m);
                                        count[i]++;
                                    }
                                }
                            }
                        }
                    }
                });
                long start = System.nanoTime();
                for (int i = 0; i < total; i++) {
                    pace(start, i, interval);
                    pub.send(message(size, i));
                }
                rx.join(Duration.ofSeconds(20));
                poller.close();
                String outcome = "still open (no answer within the run)";
                long closedAfter = -1;
                List<Frame> frames = session.drainReceived();
                for (Frame f : frames) {
                    if (f instanceof Frame.StreamClosed c && c.streamId() == slowId) {
                        outcome = "stream_closed " + c.code();
                        closedAfter = (System.nanoTime() - start) / 1_000_000;
                    }
                }
                long[] all = Arrays.stream(lat).flatMapToLong(Arrays::stream).filter(v -> v > 0).sorted().toArray();
                Latency l = all.length == 0 ? new Latency(-1, -1, -1, -1, fast * total)
                        : new Latency(pct(all, 0.5), pct(all, 0.99), pct(all, 0.999), all[all.length - 1],
                        (int) ((long) fast * total - all.length));
                return new Slow(fast, total, Arrays.stream(count).min().orElse(0), l, outcome, closedAfter);
            } finally {
                route.close();
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // measurement helpers

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static long usedAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
            sleepMillis(50);
        }
        return MEMORY.getHeapMemoryUsage().getUsed();
    }

    private static String procStatus(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(field + ":")) {
                    return line.substring(field.length() + 1).trim();
                }
            }
        } catch (IOException ignored) {
            // not Linux
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

    // ---------------------------------------------------------------------------------------------

    private void runAll() throws Exception {
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
        String workloads = System.getProperty("bench.workloads", "latency,throughput,streams,slow");
        boolean all = kinds.length == Kind.values().length;
        // warm-up: one short latency run per path, discarded (JIT, TLS session set-up)
        for (Kind k : kinds) {
            latency(k);
            log("warm-up " + k + " done");
        }

        if (workloads.contains("latency")) {
            latencyTable(kinds, all, out);
        }
        if (workloads.contains("throughput")) {
            throughputTable(kinds, all, out);
        }
        if (workloads.contains("streams")) {
            streamsTable(out);
        }
        if (workloads.contains("slow")) {
            slowTable(out);
        }
        if (workloads.contains("joins")) { // diagnostic, not in the default set
            int n = Integer.getInteger("bench.joins", 40);
            int failed = 0;
            for (int i = 0; i < n; i++) {
                try (Pair p = tryPair(Kind.BROKER)) {
                    p.pub.send(message(HEADER, 0));
                } catch (IllegalStateException e) {
                    failed++;
                    log("join " + i + " failed: " + session.drainReceived());
                }
            }
            out.append("Broker subscriptions that did not join: ").append(failed).append(" of ").append(n).append("\n");
            flush(out);
        }
        long[] bh = brokerHeap();
        out.append("Broker JVM (child, -Xmx").append(System.getProperty("bench.brokerXmx", "512m"))
                .append("): peak RSS (VmHWM) ").append(brokerStatus("VmHWM"))
                .append(", peak heap used (sampled every 20 ms, garbage included) ").append(mib(bh[1]))
                .append(". Harness JVM (router, JeroMQ peers, bridges): peak RSS ").append(procStatus("VmHWM"))
                .append(", peak heap used ").append(mib(peakHeapUsed.get())).append(". Subscriptions that never joined ")
                .append("within 20 s and were retried once: ").append(joinFailures.get()).append(".\n");
        flush(out);
    }

    private void latencyTable(Kind[] kinds, boolean all, StringBuilder out) throws Exception {
        // latency, interleaved by run so drift hits every path alike
        Map<Kind, List<Latency>> lat = new LinkedHashMap<>();
        for (int r = 0; r < runs; r++) {
            for (Kind k : kinds) {
                Latency l = latency(k);
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
                    Throughput t = throughput(k, sz[0], sz[1]);
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
        Fanout f = fanout(n);
        log("fanout: " + f);
        out.append("### ").append(n).append(" concurrent streams on one session, 10 msg/s each (broker)\n\n");
        out.append("| delivered / expected | open + join | broker CPU (cores) | broker heap after GC: before / ")
                .append("streams idle / after load | broker heap per idle stream | broker peak heap used |\n")
                .append("|---|---:|---:|---|---:|---:|\n");
        out.append("| ").append(f.delivered()).append(" / ").append(f.expected()).append(" | ")
                .append(f1(f.openSeconds())).append(" s | ").append(f2(f.cpuCores())).append(" | ")
                .append(mib(f.heapBaseline())).append(" / ").append(mib(f.heapIdle())).append(" / ")
                .append(mib(f.heapAfterLoad())).append(" | ")
                .append(String.format(Locale.ROOT, "%.1f KiB", f.streamsIdleBytesEach() / 1024.0)).append(" | ")
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
            Slow s = slowRouter(4, c[0], c[1]);
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

    private int printed;

    private static void log(String s) {
        System.err.println("[bench " + Instant.now() + "] " + s);
    }
}
