package io.continuum.broker.relay;

/**
 * Identity of the relay implementation, sent as {@code agent} and {@code user-agent}.
 */
public final class RelayInfo {
    /** Product name. */
    public static final String PRODUCT = "continuum-event-broker";

    private RelayInfo() {
    }

    /**
     * Version of this build, from the jar manifest, or {@code dev} when run from classes.
     *
     * @return version string
     */
    public static String version() {
        String v = RelayInfo.class.getPackage().getImplementationVersion();
        return v == null ? "0.1.0-dev" : v;
    }

    /**
     * {@code continuum-event-broker/<version>}.
     *
     * @return agent string
     */
    public static String agent() {
        return PRODUCT + "/" + version();
    }
}
