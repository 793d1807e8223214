package io.continuum.broker.app.config;

import java.util.Optional;

/**
 * Where the observability server listens ({@code metrics_listen}): {@code host:port} with an IPv4
 * literal, {@code [IPv6]:port}, or a host name. Port 0 picks a free port (useful in tests).
 *
 * @param host host or IP literal, IPv6 without brackets
 * @param port 0..65535
 */
public record ListenAddress(String host, int port) {

    /**
     * Parses {@code host:port} or {@code [v6]:port}.
     *
     * @param text configured value
     * @return address, or empty if malformed
     */
    public static Optional<ListenAddress> parse(String text) {
        String host;
        String port;
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0 || close + 1 >= text.length() || text.charAt(close + 1) != ':') {
                return Optional.empty();
            }
            host = text.substring(1, close);
            port = text.substring(close + 2);
            if (IpLiterals.ipv6Bytes(host).isEmpty()) {
                return Optional.empty();
            }
        } else {
            int colon = text.lastIndexOf(':');
            if (colon <= 0 || text.indexOf(':') != colon) {
                return Optional.empty();
            }
            host = text.substring(0, colon);
            port = text.substring(colon + 1);
            if (!validHost(host)) {
                return Optional.empty();
            }
        }
        if (!port.matches("0|[1-9][0-9]{0,4}") || Integer.parseInt(port) > 65535) {
            return Optional.empty();
        }
        return Optional.of(new ListenAddress(host, Integer.parseInt(port)));
    }

    private static boolean validHost(String host) {
        if (IpLiterals.ipv4(host).isPresent()) {
            return true;
        }
        return HostNames.isDnsName(host);
    }

    @Override
    public String toString() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
