package io.continuum.broker.app;

/**
 * Entry point of {@code continuum-event-broker}.
 */
public final class Main {
    private Main() {
    }

    /**
     * Runs the broker.
     *
     * @param args command line
     */
    public static void main(String[] args) {
        System.out.println("continuum-event-broker [--config PATH] [--check-config]");
    }
}
