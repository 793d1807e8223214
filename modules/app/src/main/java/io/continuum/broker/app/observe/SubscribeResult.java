package io.continuum.broker.app.observe;

/**
 * Outcome of one {@code subscribe}: the {@code result} label of {@code continuum_event_broker_subscribes_total} (R-MET).
 */
public enum SubscribeResult {
    /** Label value {@code opened}. */
    OPENED("opened"),
    /** Label value {@code refused}. */
    REFUSED("refused");

    private final String label;

    SubscribeResult(String label) {
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
