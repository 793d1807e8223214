package io.continuum.broker.metadata;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Locale;

import io.continuum.broker.metadata.Host.DnsName;
import io.continuum.broker.metadata.Host.InvalidHostException;
import io.continuum.broker.metadata.Host.IpLiteral;

/**
 * The parser behind {@link Host#parse}.
 */
final class HostParser {
    private HostParser() {
    }

    static Host parse(String raw) {
        if (raw == null || raw.isEmpty()) {
            throw new InvalidHostException("empty host");
        }
        if (raw.length() > Host.MAX_LENGTH) {
            throw new InvalidHostException("host longer than " + Host.MAX_LENGTH + " characters");
        }
        if (raw.indexOf(':') >= 0) {
            return ipv6(raw);
        }
        if (looksNumeric(raw)) {
            InetAddress v4 = canonicalIpv4(raw);
            if (v4 == null) {
                throw new InvalidHostException("not a canonical IPv4 literal");
            }
            return new IpLiteral(v4, raw);
        }
        return dnsName(raw);
    }

    private static Host ipv6(String raw) {
        if (raw.indexOf('%') >= 0 || raw.indexOf('[') >= 0 || raw.indexOf(']') >= 0) {
            throw new InvalidHostException("IPv6 literal with zone id or brackets");
        }
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            boolean ok = c == ':' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')
                    || (c >= 'A' && c <= 'F');
            if (!ok) {
                throw new InvalidHostException("invalid IPv6 literal");
            }
        }
        int lastColon = raw.lastIndexOf(':');
        if (raw.indexOf('.') >= 0 && canonicalIpv4(raw.substring(lastColon + 1)) == null) {
            throw new InvalidHostException("invalid IPv6 literal (embedded IPv4 part)");
        }
        InetAddress address;
        try {
            // A literal only: ofLiteral never consults DNS.
            address = Inet6Address.ofLiteral(raw);
        } catch (IllegalArgumentException e) {
            throw new InvalidHostException("invalid IPv6 literal");
        }
        return new IpLiteral(address, address.getHostAddress());
    }

    private static Host dnsName(String raw) {
        int labelLength = 0;
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '.') {
                if (labelLength == 0) {
                    throw new InvalidHostException("empty DNS label");
                }
                if (raw.charAt(i - 1) == '-') {
                    throw new InvalidHostException("DNS label ends with a hyphen");
                }
                labelLength = 0;
                continue;
            }
            if (c == '-' && labelLength == 0) {
                throw new InvalidHostException("DNS label starts with a hyphen");
            }
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '_';
            if (!ok) {
                throw new InvalidHostException("invalid character in DNS name");
            }
            if (++labelLength > 63) {
                throw new InvalidHostException("DNS label longer than 63 characters");
            }
        }
        if (labelLength == 0) {
            throw new InvalidHostException("DNS name ends with a dot");
        }
        if (raw.charAt(raw.length() - 1) == '-') {
            throw new InvalidHostException("DNS label ends with a hyphen");
        }
        return new DnsName(raw.toLowerCase(Locale.ROOT));
    }

    /**
     * True when the host's last label is all digits, or when every dot-separated part is a
     * number the C library's {@code inet_aton} would accept (decimal, {@code 0}-octal or
     * {@code 0x}-hex). Such hosts must be canonical IPv4 literals or nothing.
     */
    static boolean looksNumeric(String raw) {
        String last = raw.substring(raw.lastIndexOf('.') + 1);
        if (!last.isEmpty() && allDigits(last)) {
            return true;
        }
        if (raw.endsWith(".")) {
            // "1.2.3.4." and "0x7f." read as numbers by some resolvers.
            return looksNumeric(raw.substring(0, raw.length() - 1)) || raw.length() == 1;
        }
        for (String part : raw.split("\\.", -1)) {
            if (!isCNumber(part)) {
                return false;
            }
        }
        return true;
    }

    private static boolean isCNumber(String part) {
        if (part.isEmpty()) {
            return false;
        }
        if (part.length() > 1 && (part.charAt(0) == '0') && (part.charAt(1) == 'x' || part.charAt(1) == 'X')) {
            for (int i = 2; i < part.length(); i++) {
                if (Character.digit(part.charAt(i), 16) < 0) {
                    return false;
                }
            }
            return true;
        }
        return allDigits(part);
    }

    private static boolean allDigits(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return !s.isEmpty();
    }

    /**
     * Parses exactly four decimal parts 0-255 without leading zeros ({@code 0} excepted).
     *
     * @return the address, or null when {@code s} is not canonical
     */
    static InetAddress canonicalIpv4(String s) {
        byte[] bytes = new byte[4];
        int part = 0;
        int start = 0;
        for (int i = 0; i <= s.length(); i++) {
            if (i == s.length() || s.charAt(i) == '.') {
                if (part == 4) {
                    return null;
                }
                int len = i - start;
                if (len == 0 || len > 3 || (len > 1 && s.charAt(start) == '0')) {
                    return null;
                }
                int value = 0;
                for (int j = start; j < i; j++) {
                    char c = s.charAt(j);
                    if (c < '0' || c > '9') {
                        return null;
                    }
                    value = value * 10 + (c - '0');
                }
                if (value > 255) {
                    return null;
                }
                bytes[part++] = (byte) value;
                start = i + 1;
            }
        }
        if (part != 4) {
            return null;
        }
        try {
            return InetAddress.getByAddress(bytes);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError("4-byte address rejected", e);
        }
    }
}
