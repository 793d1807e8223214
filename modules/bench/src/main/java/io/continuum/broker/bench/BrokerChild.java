package io.continuum.broker.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.io.InputStream;
import java.net.URI;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import javax.management.ListenerNotFoundException;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

import com.sun.management.GarbageCollectionNotificationInfo;
import com.sun.management.GcInfo;

import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.relay.EventBroker;
import io.continuum.broker.relay.api.Cidr;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayMetrics;

/**
 * The broker alone in its own JVM, so the harness measures its heap, RSS and CPU honestly. Driven over
 * stdin by {@link LoadHarness} and bench/isolate.py: {@code heap} prints {@code heap <used after GC> <peak used
 * before any collection>}; {@code peak-reset} restarts the peak and records it at each collection, {@code peak-stop} stops recording (each answers {@code ok}); {@code quit} or EOF stops it. Args: bus URL, CA PEM file, credential.
 */
public final class BrokerChild {
    private BrokerChild() {
    }

    /**
     * Runs the broker until told to quit.
     *
     * @param args bus URL, CA PEM path, credential
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        // the broker's own log lines, fields included (the JDK's default formatter prints the event name only)
        for (java.util.logging.Handler h : java.util.logging.Logger.getLogger("").getHandlers()) {
            h.setFormatter(new io.continuum.broker.event.EventFormatter(
                    io.continuum.broker.event.EventFormatter.Style.LOGFMT, false));
        }
        List<X509Certificate> ca;
        try (InputStream in = Files.newInputStream(Path.of(args[1]))) {
            ca = CertificateFactory.getInstance("X.509").generateCertificates(in).stream()
                    .map(X509Certificate.class::cast).toList();
        }
        String credential = args[2];
        RelayConfig config = RelayConfig.builder()
                .busUrl(URI.create(args[0]))
                .caCertificates(() -> ca)
                .credential(() -> Credential.of(credential))
                .clientId("bench-broker")
                .kubernetesNamespace("bench")
                .dynamoNamespaces(List.of(LoadHarness.NAMESPACE))
                .allowedCidrs(List.of(Cidr.parse("127.0.0.0/8")))
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200))
                .busConnectTimeout(Duration.ofSeconds(10))
                .build();
        AtomicLong peak = new AtomicLong();
        Runnable stopRecordingPeak = recordPeakAtEachCollection(peak);
        EventBroker broker = EventBroker.create(config, new PublisherView() {
            @Override
            public boolean isSynced() {
                return true;
            }

            @Override
            public Advertisement check(PublisherKey key) {
                return Advertisement.ADVERTISED;
            }

            @Override
            public AutoCloseable onChange(Runnable listener) {
                return () -> { };
            }
        }, RelayMetrics.NOOP);
        broker.start();
        System.out.println("started");
        System.out.flush();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null && !line.equals("quit")) {
                if (line.equals("peak-reset")) { // the next "heap" reports the peak since now
                    stopRecordingPeak.run();
                    peak.set(0);
                    stopRecordingPeak = recordPeakAtEachCollection(peak);
                    System.out.println("ok");
                    System.out.flush();
                } else if (line.equals("peak-stop")) { // no more notifications until the next peak-reset
                    stopRecordingPeak.run();
                    stopRecordingPeak = () -> { };
                    System.out.println("ok");
                    System.out.flush();
                } else if (line.equals("heap")) {
                    // the heap in use now counts too: the last collection may be long past
                    peak.accumulateAndGet(ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(), Math::max);
                    for (int i = 0; i < 3; i++) {
                        System.gc();
                        Thread.sleep(50);
                    }
                    long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
                    System.out.println("heap " + used + " " + peak.get());
                    System.out.flush();
                }
            }
        } finally {
            broker.close();
        }
        System.exit(0);
    }

    /**
     * Keeps {@code peak} at the most heap in use seen by any collection, which is where the heap is fullest: right
     * before it. Read from the collectors' own notifications, not by polling: a sampler thread polling every 20 ms
     * ran on the broker's one core and showed up in the slowest latency messages' time (docs/benchmarks.md).
     * Neither is free: the JVM builds a {@code GcInfo} for every collection while a listener is registered (1-4 ms
     * of the broker's core each, docs/benchmarks-journal.md), so bench/isolate.py records only around the load
     * whose peak it reports ({@code peak-reset} ... {@code peak-stop}) and its latency runs have none.
     *
     * @return removes the listeners, after which the JVM stops building notifications
     */
    private static Runnable recordPeakAtEachCollection(AtomicLong peak) {
        Set<String> heapPools = new HashSet<>();
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                heapPools.add(pool.getName());
            }
        }
        List<Runnable> removals = new ArrayList<>();
        for (GarbageCollectorMXBean collector : ManagementFactory.getGarbageCollectorMXBeans()) {
            NotificationEmitter emitter = (NotificationEmitter) collector;
            NotificationListener listener = (notification, handback) -> {
                if (!notification.getType().equals(GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION)) {
                    return;
                }
                GcInfo info = GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData()).getGcInfo();
                long before = 0;
                for (Map.Entry<String, MemoryUsage> pool : info.getMemoryUsageBeforeGc().entrySet()) {
                    if (heapPools.contains(pool.getKey())) {
                        before += pool.getValue().getUsed();
                    }
                }
                peak.accumulateAndGet(before, Math::max);
            };
            emitter.addNotificationListener(listener, null, null);
            removals.add(() -> {
                try {
                    emitter.removeNotificationListener(listener);
                } catch (ListenerNotFoundException e) {
                    throw new IllegalStateException(e);
                }
            });
        }
        return () -> removals.forEach(Runnable::run);
    }
}
