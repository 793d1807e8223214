package io.continuum.broker.metadata;

import java.util.Locale;
import java.util.Objects;

/**
 * What a publisher is advertised as: {@code (dynamo namespace, host, port)}.
 * <p>
 * Host comparison follows dynamo-worker-metadata.md: exact on the string, except that DNS names
 * compare case-insensitively and IPv6 literals compare by address. Use {@link #of} to build keys so
 * both sides of a comparison are normalised the same way. The host is held without brackets.
 *
 * @param namespace Dynamo namespace
 * @param host      normalised host (lower-case DNS name, IPv4 literal, or canonical IPv6 text)
 * @param port      1..65535
 */
public record PublisherKey(String namespace, String host, int port) {
    /**
     * Canonical constructor: validates the shape only; use {@link #of} to normalise.
     */
    public PublisherKey {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(host, "host");
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
    }

    /**
     * Builds a key with the host normalised for comparison.
     *
     * @param namespace Dynamo namespace
     * @param host      host as advertised or as carried by a subscribe target (no brackets)
     * @param port      port
     * @return normalised key
     */
    public static PublisherKey of(String namespace, String host, int port) {
        return new PublisherKey(namespace, HostNames.normalise(host), port);
    }

    @Override
    public String toString() {
        return namespace + "/" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /**
     * Host normalisation shared by advertisements and subscribe targets.
     */
    static final class HostNames {
        private HostNames() {
        }

        static String normalise(String host) {
            if (host.indexOf(':') >= 0) {
                try {
                    // A literal only: ofLiteral never consults DNS.
                    return java.net.Inet6Address.ofLiteral(host).getHostAddress();
                } catch (IllegalArgumentException e) {
                    return host.toLowerCase(Locale.ROOT);
                }
            }
            return host.toLowerCase(Locale.ROOT);
        }
    }
}
