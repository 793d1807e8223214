package io.continuum.broker.app.observe;

/**
 * Why a metadata entry or resource was skipped: the {@code reason} label of {@code continuum_event_broker_metadata_skipped_total} (dynamo-worker-metadata.md, normative).
 */
public enum SkipReason {
    /** Label value {@code malformed_resource}. */
    MALFORMED_RESOURCE("malformed_resource"),
    /** Label value {@code no_data}. */
    NO_DATA("no_data"),
    /** Label value {@code malformed_channel}. */
    MALFORMED_CHANNEL("malformed_channel"),
    /** Label value {@code invalid_endpoint}. */
    INVALID_ENDPOINT("invalid_endpoint"),
    /** Label value {@code oversized}. */
    OVERSIZED("oversized"),
    /** Label value {@code channel_cap}. */
    CHANNEL_CAP("channel_cap"),
    /** Label value {@code publisher_cap}. */
    PUBLISHER_CAP("publisher_cap"),
    /** Label value {@code resource_cap}. */
    RESOURCE_CAP("resource_cap"),
    /** Label value {@code total_cap}. */
    TOTAL_CAP("total_cap");

    private final String label;

    SkipReason(String label) {
        this.label = label;
    }

    /**
     * The metric label value.
     *
     * @return label value
     */
    public String label() {
        return label;
    }

    @Override
    public String toString() {
        return label;
    }
}
