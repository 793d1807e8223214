package io.continuum.broker.relay.dial;

import java.net.Inet4Address;
import java.net.InetAddress;

import io.continuum.broker.metadata.Host;

/**
 * One {@code allowed_cidrs} entry (R-CFG, R-SEC 8-9), parsed strictly and normalised.
 * <p>
 * Accepted forms: {@code <canonical IPv4>/<0-32>} and {@code <IPv6 literal>/<0-128>}. The
 * address part follows the same rules as a target host ({@link Host#parse}): IPv4 only as four
 * canonical decimal parts, IPv6 without brackets or zone id. The prefix length is mandatory
 * (a bare address is rejected so that no entry is ever read wider or narrower than written),
 * decimal, without sign or leading zeros. Host bits beyond the prefix are cleared
 * ({@code 10.1.2.3/8} becomes {@code 10.0.0.0/8}). An IPv6 entry inside the IPv4-mapped range
 * {@code ::ffff:0:0/96} is normalised to the IPv4 entry it denotes ({@code ::ffff:10.0.0.0/104}
 * becomes {@code 10.0.0.0/8}), since the JDK presents such addresses as IPv4 anyway.
 * <p>
 * Internally an entry is a pair of longs (IPv4 in the low 32 bits of {@code lo}) and a mask pair,
 * so membership tests neither allocate nor branch on byte arrays.
 */
public final class Cidr {
    private final boolean ipv6;
    private final long hi;
    private final long lo;
    private final long maskHi;
    private final long maskLo;
    private final int prefixLength;

    private Cidr(boolean ipv6, long hi, long lo, int prefixLength) {
        this.ipv6 = ipv6;
        this.prefixLength = prefixLength;
        if (ipv6) {
            this.maskHi = prefixLength == 0 ? 0L : prefixLength >= 64 ? -1L : -1L << (64 - prefixLength);
            this.maskLo = prefixLength <= 64 ? 0L : prefixLength == 128 ? -1L : -1L << (128 - prefixLength);
        } else {
            this.maskHi = 0L;
            this.maskLo = prefixLength == 0 ? 0L : (0xFFFF_FFFFL << (32 - prefixLength)) & 0xFFFF_FFFFL;
        }
        this.hi = hi & maskHi;
        this.lo = lo & maskLo;
    }

    /**
     * An IPv4 range.
     *
     * @param address      IPv4 address as an int (big-endian, as on the wire)
     * @param prefixLength 0..32
     * @return the range, host bits cleared
     */
    public static Cidr ipv4(int address, int prefixLength) {
        if (prefixLength < 0 || prefixLength > 32) {
            throw new IllegalArgumentException("IPv4 prefix length out of range: " + prefixLength);
        }
        return new Cidr(false, 0L, address & 0xFFFF_FFFFL, prefixLength);
    }

    /**
     * An IPv6 range.
     *
     * @param hi           upper 64 bits
     * @param lo           lower 64 bits
     * @param prefixLength 0..128
     * @return the range, host bits cleared
     */
    public static Cidr ipv6(long hi, long lo, int prefixLength) {
        if (prefixLength < 0 || prefixLength > 128) {
            throw new IllegalArgumentException("IPv6 prefix length out of range: " + prefixLength);
        }
        return new Cidr(true, hi, lo, prefixLength);
    }

    /**
     * Parses one {@code allowed_cidrs} entry. The config loader calls this for every entry.
     *
     * @param text entry, e.g. {@code 10.244.0.0/16} or {@code fd00:10::/64}
     * @return the normalised range
     * @throws IllegalArgumentException with a message naming the entry and the rule broken
     */
    public static Cidr parse(String text) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("allowed_cidrs entry is empty");
        }
        String shown = text.length() > 64 ? text.substring(0, 64) + "..." : text;
        int slash = text.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException(
                    "allowed_cidrs entry \"" + shown + "\": missing /prefix-length (write /32 or /128 for one address)");
        }
        if (text.indexOf('/', slash + 1) >= 0) {
            throw new IllegalArgumentException("allowed_cidrs entry \"" + shown + "\": more than one '/'");
        }
        String addressPart = text.substring(0, slash);
        String prefixPart = text.substring(slash + 1);
        int prefix = parsePrefix(prefixPart, shown);
        boolean writtenAsIpv6 = addressPart.indexOf(':') >= 0;
        InetAddress address;
        try {
            Host host = Host.parse(addressPart);
            if (!(host instanceof Host.IpLiteral literal)) {
                throw new IllegalArgumentException(
                        "allowed_cidrs entry \"" + shown + "\": not an IP address (host names are not allowed)");
            }
            address = literal.address();
        } catch (Host.InvalidHostException e) {
            throw new IllegalArgumentException("allowed_cidrs entry \"" + shown + "\": " + e.getMessage(), e);
        }
        if (address instanceof Inet4Address v4) {
            if (writtenAsIpv6) {
                // ::ffff:a.b.c.d/n, which the JDK hands back as IPv4: n counts over 128 bits.
                if (prefix > 128) {
                    throw new IllegalArgumentException(
                            "allowed_cidrs entry \"" + shown + "\": IPv6 prefix length above 128");
                }
                if (prefix < 96) {
                    return ipv6(0L, 0xFFFF_0000_0000L | (toInt(v4) & 0xFFFF_FFFFL), prefix);
                }
                return ipv4(toInt(v4), prefix - 96);
            }
            if (prefix > 32) {
                throw new IllegalArgumentException("allowed_cidrs entry \"" + shown + "\": IPv4 prefix length above 32");
            }
            return ipv4(toInt(v4), prefix);
        }
        if (prefix > 128) {
            throw new IllegalArgumentException("allowed_cidrs entry \"" + shown + "\": IPv6 prefix length above 128");
        }
        byte[] b = address.getAddress();
        return ipv6(longAt(b, 0), longAt(b, 8), prefix);
    }

    private static int parsePrefix(String p, String shown) {
        if (p.isEmpty() || p.length() > 3 || (p.length() > 1 && p.charAt(0) == '0')) {
            throw new IllegalArgumentException(
                    "allowed_cidrs entry \"" + shown + "\": prefix length must be a decimal number without leading zeros");
        }
        int value = 0;
        for (int i = 0; i < p.length(); i++) {
            char c = p.charAt(i);
            if (c < '0' || c > '9') {
                throw new IllegalArgumentException(
                        "allowed_cidrs entry \"" + shown + "\": prefix length must be a decimal number");
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }

    static int toInt(Inet4Address a) {
        byte[] b = a.getAddress();
        return ((b[0] & 0xFF) << 24) | ((b[1] & 0xFF) << 16) | ((b[2] & 0xFF) << 8) | (b[3] & 0xFF);
    }

    static long longAt(byte[] b, int offset) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[offset + i] & 0xFFL);
        }
        return v;
    }

    /**
     * Whether this is an IPv6 range.
     *
     * @return true for IPv6, false for IPv4
     */
    public boolean isIpv6() {
        return ipv6;
    }

    /**
     * The prefix length.
     *
     * @return 0..32 for IPv4, 0..128 for IPv6
     */
    public int prefixLength() {
        return prefixLength;
    }

    /**
     * Membership of an IPv4 address. Allocation-free.
     *
     * @param address IPv4 address as an int
     * @return false for an IPv6 range
     */
    public boolean containsIpv4(int address) {
        return !ipv6 && ((address & 0xFFFF_FFFFL) & maskLo) == lo;
    }

    /**
     * Membership of an IPv6 address. Allocation-free.
     *
     * @param addressHi upper 64 bits
     * @param addressLo lower 64 bits
     * @return false for an IPv4 range
     */
    public boolean containsIpv6(long addressHi, long addressLo) {
        return ipv6 && (addressHi & maskHi) == hi && (addressLo & maskLo) == lo;
    }

    /**
     * Whether this range lies entirely inside {@code other} (same family, at least as long a
     * prefix, and its network inside {@code other}).
     *
     * @param other range
     * @return the answer; a range is inside itself
     */
    public boolean isInside(Cidr other) {
        if (ipv6 != other.ipv6 || prefixLength < other.prefixLength) {
            return false;
        }
        return ipv6 ? other.containsIpv6(hi, lo) : other.containsIpv4((int) lo);
    }

    /**
     * The normalised text, e.g. {@code 10.0.0.0/8} or {@code fd00:ec2:0:0:0:0:0:254/128}
     * (the JDK's full IPv6 form).
     */
    @Override
    public String toString() {
        byte[] b;
        if (ipv6) {
            b = new byte[16];
            for (int i = 0; i < 8; i++) {
                b[i] = (byte) (hi >>> (56 - 8 * i));
                b[8 + i] = (byte) (lo >>> (56 - 8 * i));
            }
        } else {
            b = new byte[] {(byte) (lo >>> 24), (byte) (lo >>> 16), (byte) (lo >>> 8), (byte) lo};
        }
        try {
            String text = ipv6 && hi == 0 && (lo >>> 32) == 0xFFFFL
                    ? "::ffff:" + InetAddress.getByAddress(new byte[] {b[12], b[13], b[14], b[15]}).getHostAddress()
                    : InetAddress.getByAddress(b).getHostAddress();
            return text + "/" + prefixLength;
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Cidr c && c.ipv6 == ipv6 && c.hi == hi && c.lo == lo && c.prefixLength == prefixLength;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(hi) * 31 + Long.hashCode(lo) * 17 + prefixLength + (ipv6 ? 1 << 20 : 0);
    }
}
