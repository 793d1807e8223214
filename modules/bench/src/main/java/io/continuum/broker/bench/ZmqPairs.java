package io.continuum.broker.bench;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.continuum.broker.bench.Route.Kind;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import static io.continuum.broker.bench.LoadHarness.HEADER;
import static io.continuum.broker.bench.LoadHarness.WAIT;
import static io.continuum.broker.bench.LoadHarness.log;

/**
 * The plumbing for one PUB -> route -> SUB pair: stamped messages (sequence number and send time), pacing, and
 * the join (PUB/SUB connect asynchronously, so a pair is ready only once the SUB saw a marker).
 */
final class ZmqPairs {
    private final BenchBroker broker;
    private final AtomicLong joinFailures = new AtomicLong();

    ZmqPairs(BenchBroker broker) {
        this.broker = broker;
    }

    static byte[] message(int size, long seq) {
        byte[] m = new byte[size];
        ByteBuffer.wrap(m).putLong(seq).putLong(System.nanoTime());
        return m;
    }

    static long seqOf(byte[] m) {
        return ByteBuffer.wrap(m).getLong(0);
    }

    static long sentAt(byte[] m) {
        return ByteBuffer.wrap(m).getLong(8);
    }

    /** PUB/SUB join asynchronously: publish markers (seq -1) until {@code subs} all saw one, then drain. */
    static void join(ZMQ.Socket pub, List<ZMQ.Socket> subs) {
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

    static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static void pace(long startNanos, long index, long intervalNanos) {
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

    static ZMQ.Socket pub(ZContext ctx) {
        ZMQ.Socket pub = ctx.createSocket(SocketType.PUB);
        pub.setSndHWM(200_000);
        pub.setLinger(0);
        return pub;
    }

    static ZMQ.Socket sub(ZContext ctx, String endpoint) {
        ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
        sub.setRcvHWM(200_000);
        sub.setLinger(0);
        sub.subscribe(new byte[0]);
        sub.connect(endpoint);
        return sub;
    }

    record Pair(ZContext ctx, ZMQ.Socket pub, ZMQ.Socket sub, Route route) implements AutoCloseable {
        @Override
        public void close() {
            route.close();
            ctx.close();
        }
    }

    Pair pair(Kind kind) throws Exception {
        try {
            return tryPair(kind);
        } catch (IllegalStateException e) {
            // counted and reported: a failed join is retried once with fresh sockets. The usual cause is JeroMQ's
            // connecting SUB losing its own connection (RouterDataStream#bridgeTo says how); on the direct and
            // stunnel paths one ZMQ socket has to connect.
            joinFailures.incrementAndGet();
            log(e.getMessage() + "; router saw: " + (broker.session() == null ? "" : broker.session().drainReceived()) + "; retrying");
            return tryPair(kind);
        }
    }


    Pair tryPair(Kind kind) throws Exception {
        ZContext ctx = new ZContext(1);
        ZMQ.Socket pub = pub(ctx);
        int port = pub.bindToRandomPort("tcp://127.0.0.1");
        Route route = Route.open(kind, port, broker);
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


    /** Subscriptions that did not join within the wait and were retried once. */
    long joinFailures() {
        return joinFailures.get();
    }
}
