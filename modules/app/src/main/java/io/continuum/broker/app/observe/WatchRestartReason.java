package io.continuum.broker.app.observe;

/**
 * Why a metadata watch pass ended: the {@code reason} label of {@code continuum_event_broker_metadata_watch_restarts_total} (R-MET).
 */
public enum WatchRestartReason {
    /** Label value {@code expired}. */
    EXPIRED("expired"),
    /** Label value {@code error}. */
    ERROR("error"),
    /** Label value {@code closed}. */
    CLOSED("closed"),
    /** Label value {@code timeout}. */
    TIMEOUT("timeout"),
    /** Label value {@code disconnected}. */
    DISCONNECTED("disconnected");

    private final String label;

    WatchRestartReason(String label) {
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
