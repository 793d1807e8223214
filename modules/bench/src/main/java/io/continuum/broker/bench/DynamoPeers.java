package io.continuum.broker.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The publishers and subscribers of the Dynamo-shaped load (bench/isolate.py): many PUBs, each at its own rate
 * of KV-event-sized messages with bursts, and one SUB per PUB that verifies every message. JeroMQ in one JVM
 * because Python peers cannot offer 150,000 msg/s on the one core the peers get. Deterministic: every rate, size
 * and burst comes from a seeded {@link Random}; the subscriber side replays each publisher's generator, so it
 * checks each message's publisher, sequence number, length and every body byte.
 * <p>
 * Protocol on stdout/stdin: prints {@code ports p1 ... pN} (the PUBs' bound ports); reads {@code subs q1 ... qN}
 * (where each SUB connects: the PUB's port, or a router's bridge port for it); prints {@code start} when the
 * timed schedule begins and {@code done <sent> <verified> <bad> <bytes> <seconds> <maxLagMs> <ended>} at the end.
 * Args: seed, publishers, min rate, max rate (msg/s), seconds.
 */
public final class DynamoPeers {
    private static final byte[] PROBE = {'W'};
    private static final byte[] END = {'E', 'N', 'D'};

    private DynamoPeers() {
    }

    static Random generator(long seed, int publisher) {
        return new Random(seed * 100_003 + publisher);
    }

    static int nextSize(Random r) {
        return 100 + r.nextInt(1_901);
    }

    static byte[] message(int publisher, long seq, int size) {
        byte[] m = new byte[size];
        ByteBuffer.wrap(m).putInt(publisher).putLong(seq);
        Arrays.fill(m, DynamoCheck.HEADER, size, (byte) (publisher * 31 + seq));
        return m;
    }

    /**
     * Runs one load.
     *
     * @param args seed, publishers, min rate, max rate, seconds
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        long seed = Long.parseLong(args[0]);
        int n = Integer.parseInt(args[1]);
        double minRate = Double.parseDouble(args[2]);
        double maxRate = Double.parseDouble(args[3]);
        double seconds = Double.parseDouble(args[4]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (ZContext ctx = new ZContext(2)) {
            ZMQ.Socket[] pubs = new ZMQ.Socket[n];
            StringBuilder ports = new StringBuilder("ports");
            for (int i = 0; i < n; i++) {
                pubs[i] = ctx.createSocket(SocketType.PUB);
                // bounded, as a real publisher's queue is: a broker that stops reading makes the PUB drop, and the
                // subscriber side counts that as lost (an unbounded queue would only exhaust this JVM's heap)
                pubs[i].setSndHWM(2_000);
                ports.append(' ').append(pubs[i].bindToRandomPort("tcp://127.0.0.1"));
            }
            System.out.println(ports);
            System.out.flush();
            String[] subPorts = in.readLine().trim().split("\\s+");
            ZMQ.Socket[] subs = new ZMQ.Socket[n];
            for (int i = 0; i < n; i++) {
                subs[i] = ctx.createSocket(SocketType.SUB);
                subs[i].setRcvHWM(0);
                subs[i].subscribe(new byte[0]);
                subs[i].connect("tcp://127.0.0.1:" + subPorts[i + 1]);
            }
            DynamoCheck check = new DynamoCheck(seed, n);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60 + (long) seconds + 60);
            Thread rx = Thread.ofPlatform().name("dynamo-rx").start(() -> receive(ctx, subs, check, deadline));
            long joinDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (check.joined() < n && System.nanoTime() < joinDeadline) {
                for (ZMQ.Socket p : pubs) {
                    p.send(PROBE);
                }
                Thread.sleep(20);
            }
            if (check.joined() < n) {
                System.out.println("done 0 0 0 0 0 0 -1");
                System.exit(1);
            }
            Thread.sleep(200);
            long[] sent = new long[n];
            Random[] gens = new Random[n];
            double[] period = new double[n];
            Random bursts = new Random(seed);
            PriorityQueue<long[]> events = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
            System.out.println("start");
            System.out.flush();
            long start = System.nanoTime();
            long end = start + (long) (seconds * 1e9);
            for (int i = 0; i < n; i++) {
                gens[i] = generator(seed, i);
                double rate = minRate + gens[i].nextDouble() * (maxRate - minRate);
                period[i] = 1e9 / rate;
                events.add(new long[] {start + (long) (bursts.nextDouble() * period[i]), i});
            }
            for (long t = start + 1_000_000_000L; t < end; t += 1_000_000_000L) {
                events.add(new long[] {t, -1}); // a burst, once a second of the schedule
            }
            long maxLag = 0;
            while (!events.isEmpty() && events.peek()[0] < end) {
                long[] e = events.poll();
                long wait = e[0] - System.nanoTime();
                if (wait > 50_000) {
                    LockSupport.parkNanos(wait);
                } else if (wait < 0) {
                    maxLag = Math.max(maxLag, -wait);
                }
                if (e[1] < 0) {
                    // a fifth of the publishers each flush 20-200 events at once (a batch of KV blocks stored)
                    for (int k = 0; k < n / 5; k++) {
                        int j = bursts.nextInt(n);
                        for (int m = 20 + bursts.nextInt(181); m > 0; m--) {
                            pubs[j].send(message(j, sent[j]++, nextSize(gens[j])));
                        }
                    }
                    continue;
                }
                int i = (int) e[1];
                pubs[i].send(message(i, sent[i]++, nextSize(gens[i])));
                e[0] += (long) period[i];
                events.add(e);
            }
            double took = (System.nanoTime() - start) / 1e9;
            Thread.sleep(500);
            for (ZMQ.Socket p : pubs) {
                p.send(END);
            }
            // every END arrives unless a stream was cut; then what arrived within 30 s is the answer
            rx.join(TimeUnit.NANOSECONDS.toMillis(Math.max(1, Math.min(deadline - System.nanoTime(),
                    TimeUnit.SECONDS.toNanos(30)))));
            long total = Arrays.stream(sent).sum();
            System.out.printf(java.util.Locale.ROOT, "done %d %d %d %d %.3f %d %d%n", total, check.ok(),
                    check.bad(), check.bytes(), took, maxLag / 1_000_000, check.ended());
            System.out.flush();
        }
        System.exit(0); // JeroMQ's reaper threads are not daemons
    }

    private static void receive(ZContext ctx, ZMQ.Socket[] subs, DynamoCheck check, long deadline) {
        int n = subs.length;
        ZMQ.Poller poller = ctx.createPoller(n);
        for (ZMQ.Socket s : subs) {
            poller.register(s, ZMQ.Poller.POLLIN);
        }
        while (check.ended() < n && System.nanoTime() < deadline) {
            if (poller.poll(200) <= 0) {
                continue;
            }
            for (int i = 0; i < n; i++) {
                if (!poller.pollin(i)) {
                    continue;
                }
                byte[] m;
                while ((m = subs[i].recv(ZMQ.DONTWAIT)) != null) {
                    check.deliver(i, m, 0, m.length);
                }
            }
        }
        poller.close();
    }
}
