package io.continuum.broker.metadata.watch;

import io.continuum.broker.metadata.RestartReason;

/**
 * Ends one list/watch pass of a namespace, with the reason the restart counter is labelled with. Thrown
 * only inside the package and caught by {@link NamespaceWatch}, so it carries no stack trace.
 */
final class Restart extends Exception {
    private static final long serialVersionUID = 1L;
    private final RestartReason reason;

    Restart(RestartReason reason, String message) {
        super(message, null, false, false);
        this.reason = reason;
    }

    RestartReason reason() {
        return reason;
    }
}
