package io.continuum.broker.app.config;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Optional;

import io.continuum.broker.metadata.Host;

/**
 * IP literals in configuration values, read by {@link Host#parse} so the configuration and the target checks agree
 * on what an address is (R-SEC 9a): IPv4 only as four canonical decimal parts, IPv6 without zone ids or brackets,
 * never a DNS lookup.
 */
final class IpLiterals {
    private IpLiterals() {
    }

    /**
     * Parses a canonical IPv4 literal.
     *
     * @param text candidate
     * @return the address, or empty if {@code text} is not a canonical IPv4 literal
     */
    static Optional<Inet4Address> ipv4(String text) {
        if (text.indexOf(':') >= 0) {
            return Optional.empty();
        }
        return literal(text).filter(Inet4Address.class::isInstance).map(Inet4Address.class::cast);
    }

    /**
     * Parses an IPv6 literal (no brackets, no zone id) into its 16 bytes. IPv4-mapped forms stay 16 bytes here
     * (the JDK would turn them into IPv4 addresses).
     *
     * @param text candidate
     * @return 16 address bytes, or empty if not an IPv6 literal
     */
    static Optional<byte[]> ipv6Bytes(String text) {
        if (text.indexOf(':') < 0) {
            return Optional.empty();
        }
        return literal(text).map(a -> {
            if (a instanceof Inet6Address) {
                return a.getAddress();
            }
            byte[] mapped = new byte[16];
            mapped[10] = (byte) 0xff;
            mapped[11] = (byte) 0xff;
            System.arraycopy(a.getAddress(), 0, mapped, 12, 4);
            return mapped;
        });
    }

    private static Optional<InetAddress> literal(String text) {
        try {
            return Host.parse(text) instanceof Host.IpLiteral literal ? Optional.of(literal.address())
                    : Optional.empty();
        } catch (Host.InvalidHostException e) {
            return Optional.empty();
        }
    }
}
