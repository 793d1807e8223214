package io.continuum.broker.metadata;

import java.util.Objects;

/**
 * What a publisher is advertised as: {@code (dynamo namespace, host, port)}.
 * <p>
 * Host comparison follows dynamo-worker-metadata.md: exact on the string, except that DNS names
 * compare case-insensitively and IPv6 literals compare by address. Use {@link #of} to build keys so
 * both sides of a comparison are normalised the same way. The host is held without brackets.
 *
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
     * @param host      host as advertised or as carried by a subscribe target (no brackets)
     * @return normalised key
     * @throws Host.InvalidHostException when the host is not acceptable (see {@link Host})
     */
    public static PublisherKey of(String namespace, String host, int port) {
        return new PublisherKey(namespace, Host.parse(host).text(), port);
    }

    /**
     * Builds a key from an already parsed host.
     *
     * @return normalised key
     */
    public static PublisherKey of(String namespace, Host host, int port) {
        return new PublisherKey(namespace, host.text(), port);
    }

    @Override
    public String toString() {
        return namespace + "/" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
