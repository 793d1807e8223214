package io.continuum.broker.relay.dial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Method;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The filter's core allocates nothing per check (ranges are precomputed long pairs, verdicts are
 * shared constants), measured with the JVM's per-thread allocation counter. This is not a speed
 * assertion: it counts bytes, which are deterministic for this code. The counter is reached
 * reflectively because the relay module does not read {@code jdk.management}; the counter's own
 * cost is measured with an empty run and subtracted.
 */
class AllocationFreeFilterTest {

    @Test
    void checkingAddressesAllocatesNothing() throws Exception {
        Object threads;
        Method allocatedBytes;
        try {
            threads = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
            allocatedBytes = Class.forName("com.sun.management.ThreadMXBean")
                    .getMethod("getCurrentThreadAllocatedBytes");
        } catch (ReflectiveOperationException e) {
            assumeTrue(false, "allocation counter not available: " + e);
            return;
        }
        AddressFilter filter = Fixtures.filter(List.of("10.0.0.0/8", "127.0.0.1/32", "fd00::/8", "64:ff9b::/96"));
        long[] v6 = {0xFD00_0000_0000_0000L, 1L, 0x0064_ff9b_0000_0000L, 0x7F00_0001L, 0x2002_A9FE_A9FE_0000L, 0L,
            0L, 1L, 0xFE80_0000_0000_0000L, 5L};
        int[] v4 = {0x0A00_0001, 0x7F00_0001, 0x7F00_0002, 0xA9FE_A9FE, 0xC0A8_0101, 0xFFFF_FFFF, 0};
        int sink = 0;
        for (int warm = 0; warm < 20_000; warm++) {
            sink += run(filter, v4, v6);
        }
        long overhead = Long.MAX_VALUE;
        long measured = Long.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
            long a = (long) allocatedBytes.invoke(threads);
            long b = (long) allocatedBytes.invoke(threads);
            overhead = Math.min(overhead, b - a);
            long before = (long) allocatedBytes.invoke(threads);
            for (int i = 0; i < 10_000; i++) {
                sink += run(filter, v4, v6);
            }
            long after = (long) allocatedBytes.invoke(threads);
            measured = Math.min(measured, after - before);
        }
        assertEquals(0, measured - overhead, "bytes allocated by 120,000 checks (sink " + sink + ")");
    }

    private static int run(AddressFilter filter, int[] v4, long[] v6) {
        int allowed = 0;
        for (int a : v4) {
            allowed += filter.checkIpv4(a).allowed() ? 1 : 0;
        }
        for (int i = 0; i < v6.length; i += 2) {
            allowed += filter.checkIpv6(v6[i], v6[i + 1]).allowed() ? 1 : 0;
        }
        return allowed;
    }
}
