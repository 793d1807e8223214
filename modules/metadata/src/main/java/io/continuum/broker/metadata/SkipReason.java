package io.continuum.broker.metadata;

/**
 * Why an entry or a resource was skipped while reading {@code DynamoWorkerMetadata}: the label of
 * {@code continuum_event_broker_metadata_skipped_total{reason}} (R-META 7). The labels are normative
 * (dynamo-worker-metadata.md).
 */
public enum SkipReason {
    /** A resource that is not an object or has no {@code metadata.name}. */
    MALFORMED_RESOURCE("malformed_resource"),
    /** A resource without an object {@code spec.data}; it is held with no publishers. */
    NO_DATA("no_data"),
    /** A channel value that is not an object, has no {@code transport} object with a string {@code kind},
     * or whose Dynamo namespace cannot be determined. */
    MALFORMED_CHANNEL("malformed_channel"),
    /** An endpoint that is not {@code tcp://HOST:PORT} with an acceptable, non-wildcard host. */
    INVALID_ENDPOINT("invalid_endpoint"),
    /** A channel key over 1 KiB, a channel value over 64 KiB or an endpoint over 256 bytes (R-META 4). */
    OVERSIZED("oversized"),
    /** A channel entry past the first 1,024 of a resource (R-META 3). */
    CHANNEL_CAP("channel_cap"),
    /** A valid publisher past the first 256 distinct ones of a resource (R-META 3). */
    PUBLISHER_CAP("publisher_cap"),
    /** A resource past 16,384 in a watched namespace (R-META 3). */
    RESOURCE_CAP("resource_cap"),
    /** A publisher reference past 65,536 in total (R-META 3, 6). */
    TOTAL_CAP("total_cap");

    private final String label;

    SkipReason(String label) {
        this.label = label;
    }

    /**
     * The metric label.
     *
     * @return label, exactly as the spec names it
     */
    public String label() {
        return label;
    }
}
