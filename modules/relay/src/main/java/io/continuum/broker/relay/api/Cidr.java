package io.continuum.broker.relay.api;

import java.net.Inet4Address;
import java.net.InetAddress;

import io.continuum.broker.metadata.Host;

/**
 * One {@code allowed_cidrs} entry (R-CFG, R-SEC 8-9), parsed strictly and normalised. The configuration loader
 * parses each entry with {@link #parse} and hands the result to the relay as it is, so what {@code --check-config}
 * accepts is exactly what the address filter is built from.
 * <p>
 * Accepted forms: {@code <canonical IPv4>[/<0-32>]} and {@code <IPv6 literal>[/<0-128>]}; a bare address is a
 * {@code /32} or {@code /128}. The address part follows the same rules as a target host ({@link Host#parse}): IPv4
 * only as four canonical decimal parts, IPv6 without brackets or zone id, never a host name, so no entry can mean an
 * address other than the one a reader sees. The prefix length is decimal, without sign, spaces or leading zeros.
 * Host bits beyond the prefix are cleared ({@code 10.1.2.3/8} becomes {@code 10.0.0.0/8}). An IPv6 entry inside the
 * IPv4-mapped range {@code ::ffff:0:0/96} becomes the IPv4 entry it denotes ({@code ::ffff:10.0.0.0/104} becomes
 * {@code 10.0.0.0/8}): the JDK hands such addresses to the filter as IPv4, so only an IPv4 entry can ever match them.
 * <p>
 * An entry is held as a pair of longs (IPv4 in the low 32 bits of {@code lo}) and a mask pair, so the address
 * filter's membership tests neither allocate nor walk byte arrays.
 */
public final class Cidr {
    /** Longest entry text repeated in an error message. */
    private static final int SHOWN_CHARS = 64;

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
     * Parses one entry.
     *
     * @param text entry, e.g. {@code 10.244.0.0/16}, {@code fd00:10::/64} or {@code 10.0.0.7}
     * @return the normalised range
     * @throws InvalidCidrException naming the entry and the rule it breaks
     */
    public static Cidr parse(String text) {
        if (text == null || text.isEmpty()) {
            throw new InvalidCidrException("", "is empty");
        }
        int slash = text.indexOf('/');
        if (slash >= 0 && text.indexOf('/', slash + 1) >= 0) {
            throw new InvalidCidrException(text, "more than one '/'");
        }
        String addressPart = slash < 0 ? text : text.substring(0, slash);
        boolean writtenAsIpv6 = addressPart.indexOf(':') >= 0;
        int prefix = slash < 0 ? (writtenAsIpv6 ? 128 : 32) : parsePrefix(text, text.substring(slash + 1));
        InetAddress address;
        try {
            if (!(Host.parse(addressPart) instanceof Host.IpLiteral literal)) {
                throw new InvalidCidrException(text, "not an IP address (host names are not allowed)");
            }
            address = literal.address();
        } catch (Host.InvalidHostException e) {
            throw new InvalidCidrException(text, e.getMessage());
        }
        if (writtenAsIpv6 && prefix > 128) {
            throw new InvalidCidrException(text, "IPv6 prefix length above 128");
        }
        if (address instanceof Inet4Address v4) {
            if (writtenAsIpv6) {
                // ::ffff:a.b.c.d/n, which the JDK hands back as IPv4: n counts over 128 bits.
                return prefix < 96 ? ipv6(0L, 0xFFFF_0000_0000L | (toInt(v4) & 0xFFFF_FFFFL), prefix)
                        : ipv4(toInt(v4), prefix - 96);
            }
            if (prefix > 32) {
                throw new InvalidCidrException(text, "IPv4 prefix length above 32");
            }
            return ipv4(toInt(v4), prefix);
        }
        byte[] b = address.getAddress();
        return ipv6(longAt(b, 0), longAt(b, 8), prefix);
    }

    private static int parsePrefix(String text, String p) {
        if (p.isEmpty() || p.length() > 3 || (p.length() > 1 && p.charAt(0) == '0')) {
            throw new InvalidCidrException(text, "prefix length must be a decimal number without leading zeros");
        }
        int value = 0;
        for (int i = 0; i < p.length(); i++) {
            char c = p.charAt(i);
            if (c < '0' || c > '9') {
                throw new InvalidCidrException(text, "prefix length must be a decimal number");
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }

    private static int toInt(Inet4Address a) {
        byte[] b = a.getAddress();
        return ((b[0] & 0xFF) << 24) | ((b[1] & 0xFF) << 16) | ((b[2] & 0xFF) << 8) | (b[3] & 0xFF);
    }

    private static long longAt(byte[] b, int offset) {
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
     * The normalised text: dotted IPv4, or IPv6 in RFC 5952 form (lower case, the longest run of two or more zero
     * groups written {@code ::}), e.g. {@code 10.0.0.0/8} or {@code fd00:ec2::254/128}.
     */
    @Override
    public String toString() {
        if (!ipv6) {
            return (lo >>> 24) + "." + ((lo >>> 16) & 0xFF) + "." + ((lo >>> 8) & 0xFF) + "." + (lo & 0xFF)
                    + "/" + prefixLength;
        }
        int[] groups = new int[8];
        for (int i = 0; i < 4; i++) {
            groups[i] = (int) (hi >>> (48 - 16 * i)) & 0xFFFF;
            groups[4 + i] = (int) (lo >>> (48 - 16 * i)) & 0xFFFF;
        }
        int bestStart = -1;
        int bestLength = 1; // a single zero group is written as 0, never as ::
        for (int i = 0; i < 8; ) {
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = j == i ? i + 1 : j;
        }
        StringBuilder sb = new StringBuilder(48);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLength - 1;
                continue;
            }
            if (!sb.isEmpty() && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(groups[i]));
        }
        return sb.append('/').append(prefixLength).toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Cidr c && c.ipv6 == ipv6 && c.hi == hi && c.lo == lo && c.prefixLength == prefixLength;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(hi) * 31 + Long.hashCode(lo) * 17 + prefixLength + (ipv6 ? 1 << 20 : 0);
    }

    /**
     * An entry that is not a CIDR. The message names the entry (cut to 64 characters) and the rule it breaks;
     * {@link #reason()} is the rule alone, for callers that name the entry themselves.
     */
    public static final class InvalidCidrException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        private final String reason;

        InvalidCidrException(String text, String reason) {
            super("CIDR \"" + (text.length() > SHOWN_CHARS ? text.substring(0, SHOWN_CHARS) + "..." : text) + "\": "
                    + reason);
            this.reason = reason;
        }

        /**
         * The rule the entry breaks, e.g. {@code IPv4 prefix length above 32}.
         *
         * @return the reason, without the entry
         */
        public String reason() {
            return reason;
        }
    }
}
