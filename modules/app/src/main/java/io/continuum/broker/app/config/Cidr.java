package io.continuum.broker.app.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Optional;

/**
 * A normalised IPv4 or IPv6 network: host bits cleared, canonical text. An {@code allowed_cidrs}
 * entry (R-CFG, R-SEC-8/9). A bare address is a host route ({@code /32} or {@code /128}).
 *
 * @param network      the network address, host bits zero
 * @param prefixLength 0..32 for IPv4, 0..128 for IPv6
 */
public record Cidr(InetAddress network, int prefixLength) {

    /**
     * Validates the fields.
     */
    public Cidr {
        int bits = network.getAddress().length * 8;
        if (prefixLength < 0 || prefixLength > bits) {
            throw new IllegalArgumentException("prefix length " + prefixLength + " out of 0.." + bits);
        }
    }

    /**
     * Parses {@code address[/prefix]}; IPv4 must be a canonical dotted quad, IPv6 without brackets
     * or zone. Host bits are cleared ({@code 10.1.2.3/8} becomes {@code 10.0.0.0/8}).
     *
     * @param text entry as configured
     * @return the network, or empty when the text is not a valid CIDR
     */
    public static Optional<Cidr> parse(String text) {
        String addr = text;
        Integer prefix = null;
        int slash = text.indexOf('/');
        if (slash >= 0) {
            addr = text.substring(0, slash);
            String p = text.substring(slash + 1);
            if (!p.matches("0|[1-9][0-9]{0,2}")) {
                return Optional.empty();
            }
            prefix = Integer.parseInt(p);
        }
        byte[] bytes;
        var v4 = IpLiterals.ipv4(addr);
        if (v4.isPresent()) {
            bytes = v4.get().getAddress();
        } else {
            var v6 = IpLiterals.ipv6Bytes(addr);
            if (v6.isEmpty()) {
                return Optional.empty();
            }
            bytes = v6.get();
        }
        int bits = bytes.length * 8;
        int len = prefix == null ? bits : prefix;
        if (len > bits) {
            return Optional.empty();
        }
        byte[] masked = Arrays.copyOf(bytes, bytes.length);
        for (int i = 0; i < masked.length; i++) {
            int keep = Math.clamp(len - i * 8L, 0, 8);
            masked[i] &= (byte) (0xff << (8 - keep));
        }
        try {
            InetAddress net = bytes.length == 4
                    ? InetAddress.getByAddress(masked)
                    : java.net.Inet6Address.getByAddress(null, masked, -1);
            return Optional.of(new Cidr(net, len));
        } catch (UnknownHostException e) {
            return Optional.empty();
        }
    }

    /**
     * Whether the network is IPv4.
     *
     * @return true for IPv4
     */
    public boolean isIpv4() {
        return network.getAddress().length == 4;
    }

    @Override
    public String toString() {
        String host = network.getHostAddress();
        if (!isIpv4()) {
            host = compressIpv6(network.getAddress());
        }
        return host + "/" + prefixLength;
    }

    // RFC 5952 text: lower case, longest run of >= 2 zero groups compressed.
    private static String compressIpv6(byte[] b) {
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        int bestStart = -1;
        int bestLen = 1;
        for (int i = 0; i < 8; ) {
            if (g[i] == 0) {
                int j = i;
                while (j < 8 && g[j] == 0) {
                    j++;
                }
                if (j - i > bestLen) {
                    bestStart = i;
                    bestLen = j - i;
                }
                i = j;
            } else {
                i++;
            }
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (!sb.isEmpty() && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }
}
