package io.continuum.broker.relay.transport;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * Where and how to reach the bus.
 *
 * @param busUrl         {@code https://host[:port]}; any other scheme is rejected (plaintext is never used)
 * @param trust          the trust anchors for the server certificate
 * @param tlsServerName  the name verified against the server certificate (and sent as SNI), or
 *                       {@code null} to use the URL host
 * @param connectTimeout bound on TCP connect, TLS handshake and the HTTP/2 preface/SETTINGS exchange together
 * @param userAgent      {@code user-agent} sent on every request
 */
public record BusEndpoint(URI busUrl, TlsTrust trust, String tlsServerName, Duration connectTimeout,
                          String userAgent) {
    /** Validates. */
    public BusEndpoint {
        Objects.requireNonNull(busUrl, "busUrl");
        Objects.requireNonNull(trust, "trust");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(userAgent, "userAgent");
        if (!"https".equalsIgnoreCase(busUrl.getScheme())) {
            throw new IllegalArgumentException("bus URL must be https://");
        }
        if (busUrl.getHost() == null || busUrl.getHost().isEmpty()) {
            throw new IllegalArgumentException("bus URL has no host");
        }
        if (connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new IllegalArgumentException("connectTimeout must be positive");
        }
        if (tlsServerName != null && tlsServerName.isBlank()) {
            tlsServerName = null;
        }
    }

    /** @return the name to verify: {@link #tlsServerName()} or the URL host (IPv6 without brackets) */
    public String verifiedName() {
        if (tlsServerName != null) {
            return tlsServerName;
        }
        String host = busUrl.getHost();
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    /** @return the URL host without IPv6 brackets */
    public String host() {
        String host = busUrl.getHost();
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    /** @return the URL port, 443 when absent */
    public int port() {
        return busUrl.getPort() == -1 ? 443 : busUrl.getPort();
    }
}
