package io.continuum.broker.relay.dial;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import io.continuum.broker.relay.api.Cidr;
import io.continuum.broker.relay.dial.AddressVerdict.Rejected;

/**
 * The address filter (R-SEC 6-9a): decides, for one resolved address, whether the broker may dial
 * it. Immutable and thread-safe; build one from the configuration and share it.
 * <p>
 * Rules, in order:
 * <ol>
 *     <li>An address inside a special range (see {@link #SPECIAL_RANGES}) is rejected, unless an
 *     {@code allowed_cidrs} entry that lies ENTIRELY inside that special range contains it
 *     (R-SEC 8). {@code 0.0.0.0/0} and {@code ::/0} therefore never unblock anything. An address in
 *     several special ranges must be unblocked for each of them: {@code 169.254.169.254} is both
 *     {@code link-local} and {@code cloud-metadata}, so {@code 169.254.0.0/16} alone does not
 *     unblock it; {@code 169.254.169.254/32} does.</li>
 *     <li>When {@code allowed_cidrs} is non-empty, an address that no entry contains is rejected
 *     ({@code outside allowed_cidrs}, R-SEC 9).</li>
 * </ol>
 * An IPv6 address that embeds an IPv4 address (IPv4-compatible {@code ::a.b.c.d}, IPv4-mapped
 * {@code ::ffff:a.b.c.d} when the JDK hands it over as IPv6, NAT64 {@code 64:ff9b::/96}, 6to4
 * {@code 2002::/16}) has two forms: it is rejected if EITHER form is special and not unblocked,
 * and it is inside {@code allowed_cidrs} if EITHER form is (R-SEC 9a). IPv4-mapped addresses
 * normally reach the filter as {@link Inet4Address} already (the JDK converts them), which is the
 * same address, so they get exactly the IPv4 rules.
 * <p>
 * Checking is allocation-free on the {@code int}/{@code long} entry points; the
 * {@link InetAddress} entry point allocates only the byte array copy the JDK's
 * {@code getAddress()} returns.
 */
public final class AddressFilter {
    /**
     * The special ranges, in the order their names are reported.
     */
    public static final List<Special> SPECIAL_RANGES = List.of(
            new Special(Cidr.parse("0.0.0.0/8"), "unspecified"),
            new Special(Cidr.parse("127.0.0.0/8"), "loopback"),
            new Special(Cidr.parse("169.254.0.0/16"), "link-local"),
            new Special(Cidr.parse("169.254.169.254/32"), "cloud-metadata"),
            new Special(Cidr.parse("100.100.100.200/32"), "cloud-metadata"),
            new Special(Cidr.parse("224.0.0.0/4"), "multicast"),
            new Special(Cidr.parse("255.255.255.255/32"), "broadcast"),
            new Special(Cidr.parse("::/128"), "unspecified"),
            new Special(Cidr.parse("::1/128"), "loopback"),
            new Special(Cidr.parse("fe80::/10"), "link-local"),
            new Special(Cidr.parse("fd00:ec2::254/128"), "cloud-metadata"),
            new Special(Cidr.parse("ff00::/8"), "multicast"));

    /** R-CFG: at most this many {@code allowed_cidrs} entries. */
    public static final int MAX_ALLOWED_CIDRS = 256;

    private static final long NAT64_HI = 0x0064_ff9b_0000_0000L;

    private final Cidr[] allowedV4;
    private final Cidr[] allowedV6;
    private final boolean allowListActive;
    private final Rule[] rulesV4;
    private final Rule[] rulesV6;
    private final List<Cidr> allowedCidrs;

    /**
     * A special range and the name it is reported by.
     *
     * @param range range
     * @param name  log-safe name
     */
    public record Special(Cidr range, String name) {
        /**
         * Validates.
         */
        public Special {
            Objects.requireNonNull(range, "range");
            Objects.requireNonNull(name, "name");
        }
    }

    /** A special range with its rejection verdict and the entries that unblock it, precomputed. */
    private record Rule(Cidr range, Rejected verdict, Cidr[] unblockers) {
    }

    /**
     * Builds the filter.
     *
     * @param allowedCidrs the {@code allowed_cidrs} entries; empty
     *                     means "no allow-list", only the special ranges apply
     * @throws IllegalArgumentException with more than {@link #MAX_ALLOWED_CIDRS} entries
     */
    public AddressFilter(List<Cidr> allowedCidrs) {
        if (allowedCidrs.size() > MAX_ALLOWED_CIDRS) {
            throw new IllegalArgumentException("allowed_cidrs has " + allowedCidrs.size() + " entries; at most "
                    + MAX_ALLOWED_CIDRS + " are allowed");
        }
        this.allowedCidrs = List.copyOf(allowedCidrs);
        this.allowedV4 = this.allowedCidrs.stream().filter(c -> !c.isIpv6()).toArray(Cidr[]::new);
        this.allowedV6 = this.allowedCidrs.stream().filter(Cidr::isIpv6).toArray(Cidr[]::new);
        this.allowListActive = !this.allowedCidrs.isEmpty();
        List<Rule> v4 = new ArrayList<>();
        List<Rule> v6 = new ArrayList<>();
        for (Special s : SPECIAL_RANGES) {
            Cidr[] unblockers = this.allowedCidrs.stream().filter(c -> c.isInside(s.range())).toArray(Cidr[]::new);
            Rule rule = new Rule(s.range(), new Rejected(s.name()), unblockers);
            (s.range().isIpv6() ? v6 : v4).add(rule);
        }
        this.rulesV4 = v4.toArray(Rule[]::new);
        this.rulesV6 = v6.toArray(Rule[]::new);
    }

    /**
     * A filter without an allow-list: only the special ranges are rejected.
     *
     * @return filter
     */
    public static AddressFilter specialRangesOnly() {
        return new AddressFilter(List.of());
    }

    /**
     * The entries this filter was built with.
     *
     * @return normalised entries
     */
    public List<Cidr> allowedCidrs() {
        return allowedCidrs;
    }

    /**
     * Decides for one resolved address.
     *
     * @param address resolved address (IPv4 or IPv6; a scope id is ignored)
     * @return verdict
     */
    public AddressVerdict check(InetAddress address) {
        byte[] b = address.getAddress();
        if (address instanceof Inet4Address) {
            return checkIpv4(((b[0] & 0xFF) << 24) | ((b[1] & 0xFF) << 16) | ((b[2] & 0xFF) << 8) | (b[3] & 0xFF));
        }
        if (address instanceof Inet6Address) {
            return checkIpv6(longAt(b, 0), longAt(b, 8));
        }
        throw new IllegalArgumentException("unknown address family");
    }

    /**
     * Decides for an IPv4 address. Allocation-free.
     *
     * @param address IPv4 address as a big-endian int
     * @return verdict
     */
    public AddressVerdict checkIpv4(int address) {
        Rejected special = specialIpv4(address);
        if (special != null) {
            return special;
        }
        if (allowListActive && !inAllowedIpv4(address)) {
            return Rejected.OUTSIDE_ALLOWED_CIDRS;
        }
        return AddressVerdict.ALLOWED;
    }

    /**
     * Decides for an IPv6 address, including the IPv4 address it may embed. Allocation-free.
     *
     * @param hi upper 64 bits
     * @param lo lower 64 bits
     * @return verdict
     */
    public AddressVerdict checkIpv6(long hi, long lo) {
        for (Rule rule : rulesV6) {
            if (rule.range.containsIpv6(hi, lo) && !unblockedIpv6(rule.unblockers, hi, lo)) {
                return rule.verdict;
            }
        }
        long embedded = embeddedIpv4(hi, lo);
        boolean hasIpv4 = embedded >= 0;
        if (hasIpv4) {
            Rejected special = specialIpv4((int) embedded);
            if (special != null) {
                return special;
            }
        }
        if (allowListActive && !inAllowedIpv6(hi, lo) && !(hasIpv4 && inAllowedIpv4((int) embedded))) {
            return Rejected.OUTSIDE_ALLOWED_CIDRS;
        }
        return AddressVerdict.ALLOWED;
    }

    /**
     * The IPv4 address an IPv6 address embeds, or -1.
     *
     * @param hi upper 64 bits
     * @param lo lower 64 bits
     * @return the IPv4 address as an unsigned value in a long, or -1 when none is embedded
     */
    static long embeddedIpv4(long hi, long lo) {
        long top96Lo = lo >>> 32;
        if (hi == 0 && top96Lo == 0xFFFFL) {
            return lo & 0xFFFF_FFFFL; // IPv4-mapped ::ffff:a.b.c.d
        }
        if (hi == 0 && top96Lo == 0 && (lo & 0xFFFF_FFFEL) != 0) {
            // IPv4-compatible ::a.b.c.d; :: and ::1 are not (RFC 4291 2.5.5.1) and have rules of their own
            return lo & 0xFFFF_FFFFL;
        }
        if (hi == NAT64_HI && top96Lo == 0) {
            return lo & 0xFFFF_FFFFL; // NAT64 64:ff9b::a.b.c.d (RFC 6052 well-known prefix)
        }
        if ((hi >>> 48) == 0x2002L) {
            return (hi >>> 16) & 0xFFFF_FFFFL; // 6to4 2002:aabb:ccdd::/48
        }
        return -1;
    }

    private static long longAt(byte[] b, int offset) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[offset + i] & 0xFFL);
        }
        return v;
    }

    private Rejected specialIpv4(int address) {
        for (Rule rule : rulesV4) {
            if (rule.range.containsIpv4(address) && !unblockedIpv4(rule.unblockers, address)) {
                return rule.verdict;
            }
        }
        return null;
    }

    private static boolean unblockedIpv4(Cidr[] unblockers, int address) {
        for (Cidr c : unblockers) {
            if (c.containsIpv4(address)) {
                return true;
            }
        }
        return false;
    }

    private static boolean unblockedIpv6(Cidr[] unblockers, long hi, long lo) {
        for (Cidr c : unblockers) {
            if (c.containsIpv6(hi, lo)) {
                return true;
            }
        }
        return false;
    }

    private boolean inAllowedIpv4(int address) {
        for (Cidr c : allowedV4) {
            if (c.containsIpv4(address)) {
                return true;
            }
        }
        return false;
    }

    private boolean inAllowedIpv6(long hi, long lo) {
        for (Cidr c : allowedV6) {
            if (c.containsIpv6(hi, lo)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "AddressFilter" + allowedCidrs;
    }
}
