package io.continuum.broker.metadata;

/**
 * Why a list or watch pass ended: the label of
 * {@code continuum_event_broker_metadata_watch_restarts_total{reason}} (R-MET).
 */
public enum RestartReason {
    /** HTTP 410 Gone (expired continue token or resource version), or an ERROR event with code 410. */
    EXPIRED("expired"),
    /** Another HTTP error status, an ERROR event, or a malformed event or page. */
    ERROR("error"),
    /** The server ended the watch. */
    CLOSED("closed"),
    /** Opening the response took longer than the opening deadline (30 s by default, R-META 5). */
    TIMEOUT("timeout"),
    /** An I/O failure (connection refused, reset, dropped mid-stream). */
    DISCONNECTED("disconnected");

    private final String label;

    RestartReason(String label) {
        this.label = label;
    }

    /**
     * The metric label.
     *
     * @return label, exactly as R-MET names it
     */
    public String label() {
        return label;
    }
}
