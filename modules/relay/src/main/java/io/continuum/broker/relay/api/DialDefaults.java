package io.continuum.broker.relay.api;

import java.time.Duration;

/**
 * The spec's values for the target checks and the dial, declared once: the relay's configuration defaults and
 * the constructors here all read them, {@code SpecDefaultsTest} holds them against the spec.
 */
public final class DialDefaults {
    /** R-OPEN: DNS resolution, counted from the subscribe. */
    public static final Duration DNS_TIMEOUT = Duration.ofSeconds(5);
    /** R-CFG {@code upstream_connect_timeout}: one connect attempt. */
    public static final Duration CONNECT_ATTEMPT_TIMEOUT = Duration.ofSeconds(5);
    /**
     * R-OPEN, bus-protocol-v1.md section 5 row 10: all connect attempts of one subscribe, counted from the end of
     * DNS.
     */
    public static final Duration CONNECT_BUDGET = Duration.ofSeconds(10);
    /** Publisher connects in flight at once; a dial waiting for a permit keeps its deadline. */
    public static final int MAX_CONCURRENT_DIALS = 64;
    /**
     * DNS lookups in flight at once, abandoned ones included: the JDK's resolver blocks in native code an interrupt
     * does not stop, so this bounds the threads a hung resolver can hold.
     */
    public static final int MAX_CONCURRENT_LOOKUPS = 32;
    /** R-SEC 11: the window of the rate-limited refusal log. */
    public static final Duration REFUSAL_LOG_WINDOW = Duration.ofSeconds(60);

    private DialDefaults() {
    }
}
