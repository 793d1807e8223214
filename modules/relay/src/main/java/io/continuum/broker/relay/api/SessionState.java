package io.continuum.broker.relay.api;

/** Where the broker's bus session stands, as {@code /statusz} shows it. */
public enum SessionState {
    /** Waiting for the initial metadata sync; the bus is not dialed yet (R-BEH 1). */
    SYNCING("syncing"),
    /** Dialing the bus or waiting for {@code welcome}. */
    CONNECTING("connecting"),
    /** Welcomed. */
    CONNECTED("connected"),
    /** Between attempts. */
    BACKOFF("backoff"),
    /** Draining for a router {@code drain} or a local shutdown. */
    DRAINING("draining"),
    /** No session and none coming: the relay stopped, or none runs. */
    IDLE("idle");

    private final String label;

    SessionState(String label) {
        this.label = label;
    }

    /**
     * The word {@code /statusz} shows.
     *
     * @return label
     */
    public String label() {
        return label;
    }

    @Override
    public String toString() {
        return label;
    }
}
