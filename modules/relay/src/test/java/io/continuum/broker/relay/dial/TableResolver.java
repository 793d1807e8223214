package io.continuum.broker.relay.dial;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A name resolver answering from a table, standing in for DNS records a compromised or careless
 * DNS could serve. Names mapped to {@link #HANG} never answer until interrupted. Counts lookups.
 */
final class TableResolver implements NameResolver {
    /** Marker: the lookup blocks until interrupted. */
    static final List<InetAddress> HANG = java.util.Collections.unmodifiableList(new java.util.ArrayList<>());

    private final Map<String, List<InetAddress>> table = new ConcurrentHashMap<>();
    private final AtomicInteger lookups = new AtomicInteger();
    /** Counted down when a hanging lookup starts. */
    final CountDownLatch hangStarted = new CountDownLatch(1);
    /** Counted down when a hanging lookup is interrupted. */
    final CountDownLatch hangInterrupted = new CountDownLatch(1);

    TableResolver map(String name, String... addresses) {
        table.put(name, java.util.Arrays.stream(addresses).map(TableResolver::literal).toList());
        return this;
    }

    TableResolver map(String name, List<InetAddress> addresses) {
        table.put(name, addresses);
        return this;
    }

    TableResolver hang(String name) {
        table.put(name, HANG);
        return this;
    }

    int lookups() {
        return lookups.get();
    }

    @Override
    public List<InetAddress> resolve(String name) throws IOException {
        lookups.incrementAndGet();
        List<InetAddress> answer = table.get(name);
        if (answer == null) {
            throw new UnknownHostException(name);
        }
        if (answer == HANG) {
            hangStarted.countDown();
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                hangInterrupted.countDown();
                throw new java.io.InterruptedIOException("lookup interrupted");
            }
        }
        return answer;
    }

    static InetAddress literal(String text) {
        return InetAddress.ofLiteral(text);
    }
}
