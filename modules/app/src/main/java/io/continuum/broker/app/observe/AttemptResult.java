package io.continuum.broker.app.observe;

/**
 * Result of one session attempt: the {@code result} label of {@code continuum_event_broker_session_attempts_total} (R-MET, bus-protocol-v1.md section 2).
 */
public enum AttemptResult {
    /** Label value {@code welcomed}. */
    WELCOMED("welcomed"),
    /** Label value {@code refused}. */
    REFUSED("refused"),
    /** Label value {@code failed}. */
    FAILED("failed");

    private final String label;

    AttemptResult(String label) {
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
