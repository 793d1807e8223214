package io.continuum.broker.relay.transport;

import java.util.List;
import java.util.Objects;

/**
 * The request head of a new stream. The transport adds {@code :scheme}, {@code :authority} and
 * {@code user-agent}.
 *
 * @param method  HTTP method, e.g. {@code POST}
 * @param path    absolute path, e.g. {@code /bus/v1/session}
 * @param headers further headers; {@code authorization} is always encoded never-indexed
 */
public record StreamRequest(String method, String path, List<Header> headers) {
    /** Validates and copies. */
    public StreamRequest {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(path, "path");
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException("path must start with /");
        }
        headers = List.copyOf(headers);
    }
}
