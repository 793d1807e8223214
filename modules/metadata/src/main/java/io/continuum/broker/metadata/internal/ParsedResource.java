package io.continuum.broker.metadata.internal;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.SkipReason;

/**
 * What the parser keeps of one resource (or of the object of a watch event).
 *
 * @param name            {@code metadata.name}, null when absent
 * @param resourceVersion {@code metadata.resourceVersion}, null when absent
 * @param wellFormed      an object with a {@code metadata.name}
 * @param publishers      distinct valid publishers in document order, at most the per-resource cap
 * @param statusCode      top-level {@code code} (a Status object in an ERROR event), or -1
 * @param skips           entries skipped inside this resource (or {@code malformed_resource}); counted
 *                        only when the caller keeps or rejects the resource, never twice
 */
public record ParsedResource(String name, String resourceVersion, boolean wellFormed,
                             List<PublisherKey> publishers, int statusCode, Map<SkipReason, Integer> skips) {
    /** Copies. */
    public ParsedResource {
        publishers = List.copyOf(publishers);
        skips = skips.isEmpty() ? Map.of() : new EnumMap<>(skips);
    }
}
