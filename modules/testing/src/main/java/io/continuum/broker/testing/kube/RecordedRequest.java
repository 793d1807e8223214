package io.continuum.broker.testing.kube;

import java.util.Map;

/**
 * One request the fake API server received, in arrival order.
 *
 * @param sequence  arrival number, starting at 1
 * @param path      path without query
 * @param query     decoded query parameters (last value wins)
 * @param kind      what the request asked for
 * @param namespace namespace of a DynamoWorkerMetadata request, else null
 */
public record RecordedRequest(long sequence, String method, String path, Map<String, String> query,
                              RequestKind kind, String namespace) {
    /** Copies. */
    public RecordedRequest {
        query = Map.copyOf(query);
    }

    /**
     * A query parameter.
     *
     * @return its value or null
     */
    public String param(String name) {
        return query.get(name);
    }
}
