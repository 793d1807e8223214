package io.continuum.broker.app.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * The router event bus address ({@code bus_url}): always {@code https} (R-SEC-13), a host and a
 * port (443 when omitted), nothing else.
 *
 * @param host host name or IP literal (IPv6 without brackets)
 * @param port 1..65535
 */
public record BusUrl(String host, int port) {

    /**
     * Parses and validates {@code https://host[:port]} (an optional trailing {@code /} is allowed).
     *
     * @param text configured value
     * @return the URL
     * @throws IllegalArgumentException with an operator-facing reason
     */
    public static BusUrl parse(String text) {
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("is not a valid URL (expected https://host[:port])");
        }
        String scheme = uri.getScheme();
        if (scheme == null) {
            throw new IllegalArgumentException("has no scheme (expected https://host[:port])");
        }
        if (!scheme.toLowerCase(Locale.ROOT).equals("https")) {
            throw new IllegalArgumentException("must use https:// (scheme '" + scheme.toLowerCase(Locale.ROOT)
                                                       + "' is not allowed; plaintext is never used, R-SEC-13)");
        }
        if (uri.getRawUserInfo() != null) {
            throw new IllegalArgumentException("must not contain user information (credentials belong in "
                                                       + "credential_file or credential_env)");
        }
        String host = uri.getHost();
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("has no host (expected https://host[:port])");
        }
        String path = uri.getRawPath();
        if (path != null && !path.isEmpty() && !path.equals("/")) {
            throw new IllegalArgumentException("must not have a path (expected https://host[:port])");
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw new IllegalArgumentException("must not have a query or fragment (expected https://host[:port])");
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        } else if (IpLiterals.ipv4(host).isEmpty() && !HostNames.isDnsName(host)) {
            throw new IllegalArgumentException("has an invalid host (non-canonical IPv4 literals are not accepted)");
        }
        int port = uri.getPort();
        if (port == 0 || port > 65535) {
            throw new IllegalArgumentException("has an invalid port (expected 1..65535)");
        }
        return new BusUrl(host.toLowerCase(Locale.ROOT), port < 0 ? 443 : port);
    }

    /**
     * The URI of this bus, e.g. {@code https://router.example:8443}.
     *
     * @return base URI without path
     */
    public URI toUri() {
        return URI.create(toString());
    }

    @Override
    public String toString() {
        return "https://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
