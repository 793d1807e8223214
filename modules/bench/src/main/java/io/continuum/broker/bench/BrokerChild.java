package io.continuum.broker.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.io.InputStream;
import java.net.URI;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.relay.EventBroker;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.net.Cidr;

/**
 * The broker alone in its own JVM, so the harness measures its heap, RSS and CPU honestly. Driven over
 * stdin by {@link LoadHarness} and bench/isolate.py: {@code heap} prints {@code heap <used after GC> <peak used
 * sampled>}; {@code peak-reset} restarts the peak (answers {@code ok}); {@code quit} or EOF stops it. Args: bus URL, CA PEM file, credential.
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
        Thread.ofPlatform().daemon().name("heap-sampler").start(() -> {
            while (true) {
                peak.accumulateAndGet(ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(), Math::max);
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
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
                    peak.set(0);
                    System.out.println("ok");
                    System.out.flush();
                } else if (line.equals("heap")) {
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
}
