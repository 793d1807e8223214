package io.continuum.broker.metadata;

/**
 * The view's answer to "is this target advertised?" (R-SEC checks 3 and 4).
 */
public enum Advertisement {
    /** Some {@code DynamoWorkerMetadata} of that namespace advertises exactly this publisher. */
    ADVERTISED,
    /** The initial list of every watched namespace has not completed yet (R-META 1). */
    NOT_SYNCED,
    /** No resource advertises it. */
    NOT_ADVERTISED;

    /**
     * Whether the target may be dialed (subject to the address filter).
     *
     * @return true only for {@link #ADVERTISED}
     */
    public boolean advertised() {
        return this == ADVERTISED;
    }
}
