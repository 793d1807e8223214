package io.continuum.broker.app.secrets;

import java.io.Serial;

/**
 * The CA bundle cannot be read, is empty, is not PEM, or holds something that is not a certificate.
 */
public final class CaBundleException extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is wrong
     */
    public CaBundleException(String message) {
        super(message);
    }
}
