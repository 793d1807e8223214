package io.continuum.broker.bench;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.continuum.broker.training.AotTraining;
import io.continuum.broker.training.RoundTrips;

/**
 * The packaged broker's first traffic with each of several AOT caches (bench/first-traffic.sh): the training run's
 * peers (modules/training) against {@code IMAGE/bin/continuum-event-broker}, which uses the cache installed in
 * {@code IMAGE/lib} for the run, or none. Reports the echo round trips (router to publisher and back, one message
 * in flight, beside two streams of 200-byte messages and one of 4 KiB writes) by window after the first subscribe,
 * and the broker's CPU over the run. Variants run in the order given, then reversed, per round (A B B A).
 * <p>
 * Args: image directory, seconds of traffic, rounds, then {@code name=CACHE_FILE} per variant ({@code name=none}
 * for no cache).
 */
public final class FirstTraffic {
    private static final long[][] WINDOWS_S = {{0, 1}, {1, 3}, {3, 10}, {10, Long.MAX_VALUE}};

    private FirstTraffic() {
    }

    /**
     * Runs the comparison.
     *
     * @param args image, seconds, rounds, variants
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        Path image = Path.of(args[0]).toAbsolutePath();
        Duration traffic = Duration.ofSeconds(Long.parseLong(args[1]));
        int rounds = Integer.parseInt(args[2]);
        Map<String, String> variants = new LinkedHashMap<>();
        for (int i = 3; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            variants.put(kv[0], kv[1]);
        }
        Path launcher = image.resolve("bin/continuum-event-broker");
        Path cache = image.resolve("lib/continuum-event-broker.aot");
        Path root = image.resolve("lib/continuum-event-broker.aot.root");
        System.out.printf("%-8s %-5s %-10s %8s %8s %8s %8s %9s%n", "variant", "round", "window", "echoes", "p50 us",
                "p99 us", "p99.9 us", "CPU s");
        for (int round = 1; round <= rounds; round++) {
            List<String> order = new ArrayList<>(variants.keySet());
            List<String> reversed = new ArrayList<>(order);
            java.util.Collections.reverse(reversed);
            order.addAll(reversed);
            for (String name : order) {
                String file = variants.get(name);
                Files.deleteIfExists(cache);
                Files.deleteIfExists(root);
                if (!file.equals("none")) {
                    Files.copy(Path.of(file), cache, StandardCopyOption.REPLACE_EXISTING);
                    Files.writeString(root, image + "\n");
                }
                AotTraining.Result r = AotTraining.run(launcher, null, traffic,
                        new PrintStream(OutputStream.nullOutputStream()));
                for (long[] w : WINDOWS_S) {
                    long[] trips = r.echoes().inWindow(w[0] * 1_000_000_000L,
                            w[1] == Long.MAX_VALUE ? Long.MAX_VALUE : w[1] * 1_000_000_000L);
                    String window = w[1] == Long.MAX_VALUE ? w[0] + "s-end" : w[0] + "-" + w[1] + "s";
                    System.out.printf("%-8s %-5d %-10s %8d %8d %8d %8d %9s%n", name, round, window, trips.length,
                            RoundTrips.quantile(trips, 0.5) / 1_000, RoundTrips.quantile(trips, 0.99) / 1_000,
                            RoundTrips.quantile(trips, 0.999) / 1_000,
                            w[0] == 0 ? String.format("%.2f", r.brokerCpu().toMillis() / 1_000.0) : "");
                }
                System.out.flush();
            }
        }
        Files.deleteIfExists(cache);
        Files.deleteIfExists(root);
    }
}
