package io.continuum.broker.bench;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.continuum.broker.bench.Route.Kind;
import io.continuum.broker.protocol.Frame;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import static io.continuum.broker.bench.ZmqPairs.message;
import static io.continuum.broker.bench.ZmqPairs.pace;
import static io.continuum.broker.bench.ZmqPairs.pub;
import static io.continuum.broker.bench.ZmqPairs.sentAt;
import static io.continuum.broker.bench.ZmqPairs.seqOf;
import static io.continuum.broker.bench.ZmqPairs.sub;
import static io.continuum.broker.bench.ZmqPairs.join;

/** The four workloads; each run opens its own routes and closes them. Every loop is bounded in count and time. */
final class Workloads {
    private final boolean quick;
    private final BenchBroker broker;
    private final ZmqPairs pairs;

    Workloads(boolean quick, BenchBroker broker, ZmqPairs pairs) {
        this.quick = quick;
        this.broker = broker;
        this.pairs = pairs;
    }

    record Latency(long p50, long p99, long p999, long max, int lost) {
    }

    /** 200-byte messages at 10k msg/s: warm-up, then the measured messages; latency from the payload stamp. */
    Latency latency(Kind kind) throws Exception {
        int rate = 10_000;
        int warm = quick ? 2_000 : 10_000;
        int measured = quick ? 10_000 : 30_000;
        int total = warm + measured;
        long interval = 1_000_000_000L / rate;
        try (ZmqPairs.Pair p = pairs.pair(kind)) {
            long[] lat = new long[measured];
            AtomicLong got = new AtomicLong();
            p.sub().setReceiveTimeOut(200);
            long deadline = System.nanoTime() + Duration.ofSeconds(total / rate + 15).toNanos();
            Thread rx = Thread.ofPlatform().name("rx").start(() -> {
                int n = 0;
                while (n < total && System.nanoTime() < deadline) {
                    byte[] m = p.sub().recv();
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
                p.pub().send(message(200, i));
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
    Throughput throughput(Kind kind, int size, int count) throws Exception {
        long window = 512 * 1024;
        try (ZmqPairs.Pair p = pairs.pair(kind)) {
            AtomicLong recvBytes = new AtomicLong();
            AtomicLong recvCount = new AtomicLong();
            AtomicLong lastRecv = new AtomicLong();
            p.sub().setReceiveTimeOut(200);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            Thread rx = Thread.ofPlatform().name("rx").start(() -> {
                while (recvCount.get() < count && System.nanoTime() < deadline) {
                    byte[] m = p.sub().recv();
                    if (m == null || seqOf(m) < 0) {
                        continue;
                    }
                    recvBytes.addAndGet(m.length);
                    recvCount.incrementAndGet();
                    lastRecv.set(System.nanoTime());
                }
            });
            long cpu0 = processCpuNanos();
            long bcpu0 = broker.cpuNanos();
            long start = System.nanoTime();
            long sent = 0;
            for (int i = 0; i < count && System.nanoTime() < deadline; i++) {
                while (sent - recvBytes.get() > window - size && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                    LockSupport.parkNanos(20_000);
                }
                p.pub().send(message(size, i));
                sent += size;
            }
            rx.join(Duration.ofSeconds(35));
            long end = recvCount.get() > 0 ? lastRecv.get() : System.nanoTime();
            long cpu = processCpuNanos() - cpu0;
            long bcpu = broker.cpuNanos() - bcpu0;
            double secs = (end - start) / 1e9;
            return new Throughput(recvBytes.get() / 1048576.0 / secs, recvCount.get() / secs,
                    (int) (count - recvCount.get()), cpu / 1e9 / secs, bcpu / 1e9 / secs);
        }
    }

    /**
     * {@code heapIdle} is taken right after the join, while its probe messages may still be on their way through
     * some streams (it varies by run); {@code heapAfterLoad} once every message was delivered, every stream open
     * and idle with nothing in flight: the cost of an idle stream is (heapAfterLoad - heapBaseline) / streams.
     */
    record Fanout(int streams, long expected, long delivered, double cpuCores, double openSeconds,
                  long heapBaseline, long heapIdle, long heapAfterLoad, long streamsIdleBytesEach, long peakHeap) {
    }

    /** 1,000 streams through one session (one PUB, 1,000 SUBs behind the router) at 10 msg/s each. */
    Fanout fanout(int streams) throws Exception {
        int perStream = quick ? 50 : 100;
        long interval = 100_000_000L; // 10 msg/s
        long baseline = broker.heap()[0];
        try (ZContext ctx = new ZContext(1)) {
            ZMQ.Socket pub = pub(ctx);
            int port = pub.bindToRandomPort("tcp://127.0.0.1");
            long t0 = System.nanoTime();
            BrokerRoute route = new BrokerRoute(port, streams, broker);
            List<ZMQ.Socket> subs = new ArrayList<>();
            try {
                for (int i = 0; i < streams; i++) {
                    subs.add(sub(ctx, route.endpoint()));
                    route.acceptNext();
                }
                join(pub, subs);
                double openSeconds = (System.nanoTime() - t0) / 1e9;
                long idle = broker.heap()[0];
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
                long cpu0 = broker.cpuNanos();
                long start = System.nanoTime();
                for (int i = 0; i < perStream; i++) {
                    pace(start, i, interval);
                    pub.send(message(200, i));
                }
                rx.join(Duration.ofSeconds(30));
                double secs = (System.nanoTime() - start) / 1e9;
                double cpu = (broker.cpuNanos() - cpu0) / 1e9 / secs;
                long[] heap = broker.heap();
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
    Slow slowRouter(int fast, int size, int rate) throws Exception {
        int total = quick ? rate * 3 / 2 : rate * 3;
        long interval = 1_000_000_000L / rate;
        try (ZContext ctx = new ZContext(1)) {
            ZMQ.Socket pub = pub(ctx);
            int port = pub.bindToRandomPort("tcp://127.0.0.1");
            BrokerRoute route = new BrokerRoute(port, fast + 1, broker);
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
                List<Frame> frames = broker.session().drainReceived();
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


    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }
}
