package io.continuum.broker.metadata.internal;

/**
 * The caps of R-META 3 and 4. {@link #SPEC} holds the normative values; tests and benchmarks may
 * shrink them.
 *
 * @param resourcesPerNamespace  resources held per watched namespace
 * @param channelsPerResource    channel entries inspected per resource
 * @param publishersPerResource  distinct valid publishers retained per resource
 * @param totalReferences        publisher references held in total (duplicates across resources count)
 * @param keyBytes               longest channel key, in UTF-8 bytes
 * @param valueBytes             longest channel value, in bytes of its JSON text as received
 * @param endpointBytes          longest endpoint string, in UTF-8 bytes
 */
public record Limits(int resourcesPerNamespace, int channelsPerResource, int publishersPerResource,
                     int totalReferences, int keyBytes, int valueBytes, int endpointBytes) {
    /** The values of R-META 3 and 4. */
    public static final Limits SPEC = new Limits(16_384, 1_024, 256, 65_536, 1_024, 64 * 1_024, 256);

    /** Validates. */
    public Limits {
        if (resourcesPerNamespace < 1 || channelsPerResource < 1 || publishersPerResource < 1
                || totalReferences < 1 || keyBytes < 1 || valueBytes < 1 || endpointBytes < 1) {
            throw new IllegalArgumentException("limits must be positive");
        }
    }
}
