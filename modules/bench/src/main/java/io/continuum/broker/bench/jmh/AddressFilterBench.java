package io.continuum.broker.bench.jmh;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.relay.api.Cidr;
import io.continuum.broker.relay.dial.AddressFilter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code AddressFilter.check} (package {@code relay.dial}, not exported: runs on the class path) with a
 * typical allow-list (pod CIDRs) and with the maximum of 256 CIDRs, on allowed and refused addresses.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class AddressFilterBench {
    private AddressFilter typical;
    private AddressFilter max;
    private InetAddress allowedV4;
    private InetAddress refusedV4;
    private InetAddress metadataV4;
    private InetAddress allowedV6;

    @Setup
    public void setUp() throws UnknownHostException {
        typical = filter(List.of("10.244.0.0/16", "10.96.0.0/12", "fd00:10:244::/56"));
        List<String> many = new ArrayList<>();
        for (int i = 0; i < AddressFilter.MAX_ALLOWED_CIDRS - 1; i++) {
            many.add("10." + i + ".0.0/16");
        }
        many.add("fd00:10:244::/56");
        max = filter(many);
        allowedV4 = InetAddress.getByName("10.244.17.201");
        refusedV4 = InetAddress.getByName("192.168.1.20");
        metadataV4 = InetAddress.getByName("169.254.169.254");
        allowedV6 = InetAddress.getByName("fd00:10:244::17");
    }

    private static AddressFilter filter(List<String> cidrs) {
        return new AddressFilter(cidrs.stream().map(Cidr::parse).toList());
    }

    @Benchmark
    public Object typicalAllowedV4() {
        return typical.check(allowedV4);
    }

    @Benchmark
    public Object typicalRefusedV4() {
        return typical.check(refusedV4);
    }

    @Benchmark
    public Object typicalLinkLocalV4() {
        return typical.check(metadataV4);
    }

    @Benchmark
    public Object typicalAllowedV6() {
        return typical.check(allowedV6);
    }

    @Benchmark
    public Object max256RefusedV4() {
        return max.check(refusedV4);
    }
}
