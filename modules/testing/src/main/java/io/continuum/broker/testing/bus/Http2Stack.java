package io.continuum.broker.testing.bus;

import java.util.Locale;

/**
 * The HTTP/2 server stack under the {@link InProcessRouter}: two independent implementations, so the broker's
 * transport is tested against more than one reading of RFC 9113.
 */
public enum Http2Stack {
    /** Helidon's WebServer (the default). */
    HELIDON,
    /** Netty's {@code codec-http2}, the reference Java HTTP/2 stack (tests only: on the test class path). */
    NETTY;

    /** The system property that picks the stack for a whole test run ({@code helidon} or {@code netty}). */
    public static final String PROPERTY = "continuum.test.routerStack";

    /** @return the stack {@link #PROPERTY} names, {@link #HELIDON} when it is unset */
    public static Http2Stack fromSystemProperty() {
        String value = System.getProperty(PROPERTY, "helidon");
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(PROPERTY + " is " + value + ", expected helidon or netty", e);
        }
    }
}
