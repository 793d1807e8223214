package io.continuum.broker.metadata;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Objects;

/**
 * A publisher host as the broker accepts it: a DNS name, a canonical IPv4 literal, or an IPv6
 * literal (without brackets). One parser serves both the advertised endpoints of
 * {@code DynamoWorkerMetadata} and the targets of {@code subscribe}, so both sides of the
 * "is it advertised?" comparison agree on what a host is (R-SEC 4, R-SEC 9a).
 * <p>
 * Rules (R-SEC 9a):
 * <ul>
 *     <li>A canonical IPv4 literal is exactly four decimal parts 0-255 without leading zeros
 *     ({@code 0} itself excepted) and without a trailing dot.</li>
 *     <li>Anything the C library would read as an IPv4 number but is not canonical
 *     ({@code 0177.0.0.1}, {@code 0x7f.1}, {@code 2130706433}, {@code 10.1}), and any host whose
 *     last label is all digits, is invalid: never resolved, never dialed.</li>
 *     <li>An IPv6 literal is parsed without DNS; zone ids ({@code %eth0}) and brackets are invalid.
 *     IPv6 literals compare by address (their canonical text).</li>
 *     <li>A DNS name is at most 253 characters of labels of 1-63 characters from
 *     {@code [A-Za-z0-9_-]}; names compare case-insensitively (held lower-case).</li>
 * </ul>
 */
public sealed interface Host {
    /** Longest host accepted (a DNS name's limit). */
    int MAX_LENGTH = 253;

    /**
     * The normalised text: lower-case DNS name, dotted IPv4, or canonical IPv6 text.
     *
     * @return text used for comparison and dialing
     */
    String text();

    /**
     * Parses a host.
     *
     * @param raw host text (no brackets)
     * @return the host
     * @throws InvalidHostException with a short, log-safe reason when the host is not acceptable
     */
    static Host parse(String raw) {
        return HostParser.parse(raw);
    }

    /**
     * A DNS name, resolved only right before dialing.
     *
     * @param text lower-case name
     */
    record DnsName(String text) implements Host {
        /**
         * Validates.
         */
        public DnsName {
            Objects.requireNonNull(text, "text");
        }
    }

    /**
     * An IP literal: resolves to itself.
     *
     * @param address the address ({@link Inet4Address} or {@link Inet6Address})
     */
    record IpLiteral(InetAddress address, String text) implements Host {
        /**
         * Validates.
         */
        public IpLiteral {
            Objects.requireNonNull(address, "address");
            Objects.requireNonNull(text, "text");
        }
    }

    /**
     * A host that is not acceptable. The message names the rule broken and is safe to log.
     */
    final class InvalidHostException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        public InvalidHostException(String message) {
            super(message);
        }
    }
}
