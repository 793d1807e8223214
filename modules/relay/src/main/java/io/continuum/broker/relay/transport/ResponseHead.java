package io.continuum.broker.relay.transport;

import java.util.List;
import java.util.Optional;

/**
 * A response's status and headers.
 *
 * @param status  HTTP status
 * @param headers response headers (names lower case)
 */
public record ResponseHead(int status, List<Header> headers) {
    /** Copies. */
    public ResponseHead {
        headers = List.copyOf(headers);
    }

    /**
     * @param name header name (any case)
     * @return the first value of that header
     */
    public Optional<String> header(String name) {
        String lower = name.toLowerCase(java.util.Locale.ROOT);
        return headers.stream().filter(h -> h.name().equals(lower)).map(Header::value).findFirst();
    }
}
