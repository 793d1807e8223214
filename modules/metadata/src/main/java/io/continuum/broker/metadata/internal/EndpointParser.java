package io.continuum.broker.metadata.internal;

import java.nio.charset.StandardCharsets;

import io.continuum.broker.metadata.Host;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.SkipReason;

/**
 * Parses an advertised endpoint: exactly {@code tcp://HOST:PORT}, HOST a DNS name, a canonical IPv4
 * literal or a bracketed IPv6 literal (dynamo-worker-metadata.md), never a wildcard.
 */
final class EndpointParser {
    private static final String SCHEME = "tcp://";

    private EndpointParser() {
    }

    /** The outcome: a key, or the reason it was skipped. */
    sealed interface Result {
    }

    record Valid(PublisherKey key) implements Result {
    }

    record Skipped(SkipReason reason) implements Result {
    }

    static Result parse(String namespace, String endpoint, int maxBytes) {
        if (endpoint.getBytes(StandardCharsets.UTF_8).length > maxBytes) {
            return new Skipped(SkipReason.OVERSIZED);
        }
        if (!endpoint.startsWith(SCHEME)) {
            return invalid();
        }
        String rest = endpoint.substring(SCHEME.length());
        String host;
        String port;
        if (rest.startsWith("[")) {
            int close = rest.indexOf(']');
            if (close < 0 || close + 1 >= rest.length() || rest.charAt(close + 1) != ':') {
                return invalid();
            }
            host = rest.substring(1, close);
            if (host.indexOf(':') < 0) {
                return invalid(); // brackets are for IPv6 literals only
            }
            port = rest.substring(close + 2);
        } else {
            int colon = rest.indexOf(':');
            if (colon < 0 || colon != rest.lastIndexOf(':')) {
                return invalid(); // missing port, or an unbracketed IPv6 literal
            }
            host = rest.substring(0, colon);
            port = rest.substring(colon + 1);
        }
        int portNumber = parsePort(port);
        if (portNumber < 0) {
            return invalid();
        }
        Host parsed;
        try {
            parsed = Host.parse(host);
        } catch (Host.InvalidHostException e) {
            return invalid();
        }
        if (parsed instanceof Host.IpLiteral ip && ip.address().isAnyLocalAddress()) {
            return invalid(); // wildcard 0.0.0.0 or :: is a bind address, not a publisher
        }
        return new Valid(PublisherKey.of(namespace, parsed, portNumber));
    }

    /** 1-65535 in decimal without sign or leading zeros, else -1. */
    static int parsePort(String s) {
        if (s.isEmpty() || s.length() > 5 || s.charAt(0) == '0') {
            return -1;
        }
        int value = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value <= 65_535 ? value : -1;
    }

    private static Skipped invalid() {
        return new Skipped(SkipReason.INVALID_ENDPOINT);
    }
}
