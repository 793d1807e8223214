package io.continuum.broker.bench.soak;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.bus.RouterDataStream;
import io.continuum.broker.testing.bus.RouterSession;

/**
 * The router side of the soak: keeps one subscription open to every advertised publisher, verifies every
 * record that arrives on a data stream (sequence numbers without gaps), sends heartbeats, and on command
 * restarts itself on the same port or asks the broker to drain for a rebalance.
 */
final class RouterDriver implements AutoCloseable {
    private static final Duration RESUBSCRIBE_AFTER = Duration.ofSeconds(1);

    private final PrivateKey key;
    private final List<X509Certificate> chain;
    private final String credential;
    private final int port;
    private final Set<Integer> advertised;
    private volatile InProcessRouter router;
    private volatile RouterSession session;
    private volatile boolean running = true;
    /** Until then no data stream is read: the router's windows stay shut and the broker buffers (R-BUF). */
    private volatile long stalledUntilNanos = System.nanoTime();
    private final Thread loop;

    final AtomicLong sessions = new AtomicLong();
    final AtomicLong recordsVerified = new AtomicLong();
    final AtomicLong gaps = new AtomicLong();
    final AtomicLong streamsOpened = new AtomicLong();
    final Map<Code, AtomicLong> refusals = new ConcurrentHashMap<>();
    final Map<Code, AtomicLong> closes = new ConcurrentHashMap<>();

    RouterDriver(PrivateKey key, List<X509Certificate> chain, String credential, Set<Integer> advertised) {
        this.key = key;
        this.chain = chain;
        this.credential = credential;
        this.advertised = advertised;
        this.router = newRouter(0);
        this.port = router.port();
        this.loop = Thread.ofPlatform().name("soak-router-driver").start(this::run);
    }

    private InProcessRouter newRouter(int onPort) {
        return InProcessRouter.builder().tls(key, chain).credential(credential).port(onPort).tcpNoDelay(true)
                .sessionPolicy(InProcessRouter.policy(h -> InProcessRouter.SessionAnswer.welcome(10_000, 30_000)))
                .start();
    }

    java.net.URI url() {
        return java.net.URI.create("https://localhost:" + port);
    }

    /** Stops the router (every connection drops) and starts a new one on the same port after a pause. */
    void restart(Duration down) throws InterruptedException {
        InProcessRouter old = router;
        old.close();
        Thread.sleep(down.toMillis()); // the outage itself is the event being simulated
        router = newRouter(port);
    }

    /** Stops reading every data stream for {@code length}: the broker's buffers toward the router fill up. */
    void stallReading(Duration length) {
        stalledUntilNanos = System.nanoTime() + length.toNanos();
    }

    /** Sends {@code drain} with reason {@code rebalance} on the current session. */
    void rebalance(Duration deadline) {
        RouterSession s = session;
        if (s != null) {
            try {
                s.send(new Frame.Drain("rebalance", OptionalLong.of(deadline.toMillis())));
            } catch (RuntimeException e) {
                // the session is already gone
            }
        }
    }

    private void run() {
        while (running) {
            RouterSession s;
            try {
                s = router.awaitSession(Duration.ofSeconds(1));
            } catch (AssertionError | RuntimeException noSessionYet) {
                continue;
            }
            sessions.incrementAndGet();
            session = s;
            try {
                serve(s);
            } catch (RuntimeException e) {
                // the session's stream broke (router restart, drain): the next one follows
            } finally {
                session = null;
            }
        }
    }

    private void serve(RouterSession s) {
        InProcessRouter r = router;
        Map<Integer, Long> byPort = new ConcurrentHashMap<>();
        Map<Long, Integer> byId = new ConcurrentHashMap<>();
        Map<Integer, Long> retryAt = new ConcurrentHashMap<>();
        long nextId = 1;
        long nextHeartbeat = 0;
        while (running && !s.awaitEnded(Duration.ofMillis(200))) {
            long now = System.nanoTime();
            if (now - nextHeartbeat >= 0) {
                s.send(Frame.Heartbeat.INSTANCE);
                nextHeartbeat = now + Duration.ofSeconds(3).toNanos();
            }
            for (Frame f : s.drainReceived()) {
                switch (f) {
                    case Frame.StreamOpened o -> {
                        streamsOpened.incrementAndGet();
                        long id = o.streamId();
                        Thread.ofVirtual().name("soak-verify-" + id).start(() -> verify(r, id));
                    }
                    case Frame.StreamRefused x -> {
                        refusals.computeIfAbsent(x.code(), k -> new AtomicLong()).incrementAndGet();
                        forget(x.streamId(), byId, byPort, retryAt, now);
                    }
                    case Frame.StreamClosed c -> {
                        closes.computeIfAbsent(c.code(), k -> new AtomicLong()).incrementAndGet();
                        forget(c.streamId(), byId, byPort, retryAt, now);
                    }
                    default -> {
                    }
                }
            }
            for (int p : advertised) {
                Long at = retryAt.get(p);
                if (!byPort.containsKey(p) && (at == null || now - at >= 0)) {
                    long id = nextId++;
                    byPort.put(p, id);
                    byId.put(id, p);
                    s.subscribe(id, SoakHarness.DYNAMO_NAMESPACE, "127.0.0.1", p);
                }
            }
        }
    }

    private static void forget(long id, Map<Long, Integer> byId, Map<Integer, Long> byPort,
                               Map<Integer, Long> retryAt, long now) {
        Integer p = byId.remove(id);
        if (p != null) {
            byPort.remove(p, id);
            retryAt.put(p, now + RESUBSCRIBE_AFTER.toNanos());
        }
    }

    /** Reads one data stream to its end, checking that record i carries sequence number i. */
    private void verify(InProcessRouter r, long id) {
        RouterDataStream ds;
        try {
            ds = r.awaitDataStream(id, Duration.ofSeconds(15));
        } catch (AssertionError | RuntimeException gone) {
            return;
        }
        byte[] record = new byte[SoakPublisher.RECORD_BYTES];
        try {
            InputStream in = ds.fromBroker();
            for (long expected = 0; ; expected++) {
                while (System.nanoTime() - stalledUntilNanos < 0) {
                    LockSupport.parkNanos(50_000_000L); // a stall is a router that stopped reading: no wake-up needed
                }
                int n = in.readNBytes(record, 0, record.length);
                if (n < record.length) {
                    return; // the stream ended (possibly mid-record: a reset may cut one)
                }
                long seq = ByteBuffer.wrap(record).getLong(0);
                if (seq != expected) {
                    gaps.incrementAndGet();
                    expected = seq;
                }
                recordsVerified.incrementAndGet();
            }
        } catch (IOException | RuntimeException e) {
            // reset or connection gone
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            loop.join(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        router.close();
    }
}
