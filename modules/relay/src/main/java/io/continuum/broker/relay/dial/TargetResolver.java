package io.continuum.broker.relay.dial;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.continuum.broker.metadata.Host;
import io.continuum.broker.relay.api.DialDefaults;
import io.continuum.broker.relay.dial.Resolution.Failed;
import io.continuum.broker.relay.dial.Resolution.Resolved;

/**
 * Resolves a target {@link Host} within the DNS deadline (R-OPEN: 5 s). An IP literal resolves to
 * itself without any lookup; a DNS name is handed to the {@link NameResolver} on a virtual thread
 * of its own while the caller waits at most until the deadline. A lookup that outlives its
 * deadline or its caller is interrupted and abandoned; its answer is never used.
 * <p>
 * Lookups in flight are bounded ({@link DialDefaults#MAX_CONCURRENT_LOOKUPS}): the JDK's resolver blocks in
 * native code that an interrupt does not stop, so an abandoned lookup holds its thread (and, for a
 * virtual thread, a carrier) until the resolver itself gives up. A lookup keeps its permit until it
 * really returns, so hundreds of subscribes to advertised names on a hung resolver hold at most that
 * many threads; a subscribe that finds no permit before its DNS deadline is refused like a lookup that
 * timed out (section 5 row 8: {@code upstream_connect_failed}).
 * <p>
 * Thread-safe and stateless: share one per process.
 */
public final class TargetResolver {
    private final NameResolver nameResolver;
    private final Duration dnsTimeout;
    private final int maxConcurrentLookups;
    private final Semaphore lookups;

    /**
     * A resolver with the JDK's name resolution and the spec's deadline ({@link DialDefaults}).
     */
    public TargetResolver() {
        this(NameResolver.system(), DialDefaults.DNS_TIMEOUT);
    }

    /**
     * A resolver.
     *
     * @param nameResolver name resolution for DNS names
     * @param dnsTimeout   how long one resolution may take, counted from the subscribe
     */
    public TargetResolver(NameResolver nameResolver, Duration dnsTimeout) {
        this(nameResolver, dnsTimeout, DialDefaults.MAX_CONCURRENT_LOOKUPS);
    }

    /**
     * A resolver.
     *
     * @param nameResolver         name resolution for DNS names
     * @param dnsTimeout           how long one resolution may take, counted from the subscribe
     * @param maxConcurrentLookups lookups in flight at once, abandoned ones included
     */
    public TargetResolver(NameResolver nameResolver, Duration dnsTimeout, int maxConcurrentLookups) {
        this.nameResolver = Objects.requireNonNull(nameResolver, "nameResolver");
        this.dnsTimeout = positive(dnsTimeout, "dnsTimeout");
        if (maxConcurrentLookups < 1) {
            throw new IllegalArgumentException("maxConcurrentLookups must be at least 1");
        }
        this.maxConcurrentLookups = maxConcurrentLookups;
        this.lookups = new Semaphore(maxConcurrentLookups);
    }

    /**
     * Lookups running right now, abandoned ones included (for tests and diagnostics).
     *
     * @return count
     */
    int lookupsInFlight() {
        return maxConcurrentLookups - lookups.availablePermits();
    }

    /**
     * The DNS deadline this resolver applies.
     *
     * @return duration
     */
    public Duration dnsTimeout() {
        return dnsTimeout;
    }

    /**
     * Resolves with the deadline counted from now.
     *
     * @param host host
     * @return resolution
     * @throws InterruptedException when the caller is interrupted (the attempt was cancelled)
     */
    public Resolution resolve(Host host) throws InterruptedException {
        return resolve(host, System.nanoTime() + dnsTimeout.toNanos());
    }

    /**
     * Resolves, answering by {@code deadlineNanos} at the latest.
     *
     * @param host          host
     * @param deadlineNanos {@link System#nanoTime()} by which an address must be known
     * @return resolution
     * @throws InterruptedException when the caller is interrupted (the attempt was cancelled)
     */
    public Resolution resolve(Host host, long deadlineNanos) throws InterruptedException {
        return switch (host) {
            case Host.IpLiteral literal -> new Resolved(List.of(literal.address()));
            case Host.DnsName name -> lookUp(name.text(), deadlineNanos);
        };
    }

    private Resolution lookUp(String name, long deadlineNanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (!lookups.tryAcquire(Math.max(0L, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)) {
            return new Failed("no DNS lookup slot before the DNS deadline (" + maxConcurrentLookups
                    + " lookups in flight)");
        }
        FutureTask<List<InetAddress>> task = new FutureTask<>(() -> nameResolver.resolve(name));
        try {
            Thread.ofVirtual().name("continuum-dns").start(() -> {
                try {
                    task.run();
                } finally {
                    // Released when the lookup really ends, not when its caller stops waiting.
                    lookups.release();
                }
            });
        } catch (RuntimeException | Error e) {
            lookups.release();
            throw e;
        }
        List<InetAddress> found;
        try {
            found = task.get(Math.max(0L, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            task.cancel(true);
            return new Failed("DNS resolution timed out");
        } catch (InterruptedException e) {
            task.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            return new Failed(e.getCause() instanceof IOException ? "DNS name did not resolve" : "DNS resolution failed");
        }
        if (found == null) {
            return new Failed("DNS returned no address");
        }
        LinkedHashSet<InetAddress> unique = new LinkedHashSet<>();
        for (InetAddress a : found) {
            if (a != null) {
                unique.add(a);
            }
        }
        if (unique.isEmpty()) {
            return new Failed("DNS returned no address");
        }
        return new Resolved(List.copyOf(unique));
    }

    static Duration positive(Duration d, String name) {
        Objects.requireNonNull(d, name);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive: " + d);
        }
        return d;
    }
}
