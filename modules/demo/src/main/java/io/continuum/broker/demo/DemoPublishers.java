package io.continuum.broker.demo;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Real ZMQ publishers (JeroMQ PUB sockets on loopback) emitting KV-event-like messages, the way a
 * Dynamo worker's kv-events publisher does: a topic frame, then a JSON payload.
 */
final class DemoPublishers implements AutoCloseable {
    private final ZContext zmq = new ZContext();
    private final List<Integer> ports = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean(true);

    DemoPublishers(int count, int messagesPerSecond) {
        for (int i = 0; i < count; i++) {
            ZMQ.Socket pub = zmq.createSocket(SocketType.PUB);
            int port = pub.bindToRandomPort("tcp://127.0.0.1");
            ports.add(port);
            int worker = i;
            threads.add(Thread.ofPlatform().daemon().name("demo-publisher-" + i).start(() -> publish(pub, worker,
                    messagesPerSecond)));
        }
    }

    List<Integer> ports() {
        return List.copyOf(ports);
    }

    private void publish(ZMQ.Socket pub, int worker, int perSecond) {
        long intervalNanos = 1_000_000_000L / perSecond;
        long next = System.nanoTime();
        long eventId = 0;
        while (running.get()) {
            long block = (worker * 1_000_003L + eventId * 7919L) & 0xffffffL;
            String payload = "{\"event_id\":" + eventId + ",\"worker_id\":" + worker
                    + ",\"type\":\"stored\",\"block_hashes\":[" + block + "," + (block + 1) + "],\"ts_ns\":"
                    + System.nanoTime() + "}";
            try {
                pub.sendMore("kv-events");
                pub.send(payload.getBytes(StandardCharsets.UTF_8));
                if (eventId % 10 == 0) {
                    pub.sendMore("load-metrics");
                    pub.send("{\"worker_id\":" + worker + ",\"kv_active_blocks\":" + (eventId % 512) + "}");
                }
            } catch (RuntimeException e) {
                return; // context closed
            }
            eventId++;
            next += intervalNanos;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(wait);
            }
        }
    }

    @Override
    public void close() {
        running.set(false);
        for (Thread t : threads) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        zmq.close();
    }
}
