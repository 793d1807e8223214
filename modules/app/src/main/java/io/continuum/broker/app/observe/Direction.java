package io.continuum.broker.app.observe;

/**
 * Relay direction: the {@code direction} label of {@code continuum_event_broker_relayed_bytes_total} (R-MET).
 */
public enum Direction {
    /** Label value {@code upstream_to_router}. */
    UPSTREAM_TO_ROUTER("upstream_to_router"),
    /** Label value {@code router_to_upstream}. */
    ROUTER_TO_UPSTREAM("router_to_upstream");

    private final String label;

    Direction(String label) {
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
