package io.continuum.broker.app.config;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Strict IP literal parsing without DNS: canonical dotted-quad IPv4 only (R-SEC-9a: four decimal
 * parts 0-255, no leading zeros, no trailing dot) and IPv6 without zone ids or brackets.
 */
final class IpLiterals {
    private static final Pattern IPV4 =
            Pattern.compile("(0|[1-9][0-9]{0,2})\\.(0|[1-9][0-9]{0,2})\\.(0|[1-9][0-9]{0,2})\\.(0|[1-9][0-9]{0,2})");
    private static final Pattern IPV6_CHARS = Pattern.compile("[0-9A-Fa-f:.]+");

    private IpLiterals() {
    }

    /**
     * Parses a canonical IPv4 literal.
     *
     * @param text candidate
     * @return the address, or empty if {@code text} is not a canonical IPv4 literal
     */
    static Optional<Inet4Address> ipv4(String text) {
        var m = IPV4.matcher(text);
        if (!m.matches()) {
            return Optional.empty();
        }
        byte[] b = new byte[4];
        for (int i = 0; i < 4; i++) {
            int part = Integer.parseInt(m.group(i + 1));
            if (part > 255) {
                return Optional.empty();
            }
            b[i] = (byte) part;
        }
        try {
            return Optional.of((Inet4Address) InetAddress.getByAddress(b));
        } catch (java.net.UnknownHostException e) {
            return Optional.empty();
        }
    }

    /**
     * Parses an IPv6 literal (no brackets, no zone id) into its 16 bytes. IPv4-mapped forms stay
     * 16 bytes here (the JDK would turn them into IPv4 addresses).
     *
     * @param text candidate
     * @return 16 address bytes, or empty if not an IPv6 literal
     */
    static Optional<byte[]> ipv6Bytes(String text) {
        if (!text.contains(":") || !IPV6_CHARS.matcher(text).matches()) {
            return Optional.empty();
        }
        // Embedded dotted-quad tail must itself be canonical.
        int lastColon = text.lastIndexOf(':');
        String tail = text.substring(lastColon + 1);
        if (tail.contains(".") && ipv4(tail).isEmpty()) {
            return Optional.empty();
        }
        try {
            InetAddress a = InetAddress.ofLiteral(text);
            if (a instanceof Inet6Address v6) {
                return Optional.of(v6.getAddress());
            }
            // ::ffff:a.b.c.d comes back as IPv4: rebuild the mapped IPv6 bytes.
            byte[] v4 = a.getAddress();
            byte[] mapped = new byte[16];
            mapped[10] = (byte) 0xff;
            mapped[11] = (byte) 0xff;
            System.arraycopy(v4, 0, mapped, 12, 4);
            return Optional.of(mapped);
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
