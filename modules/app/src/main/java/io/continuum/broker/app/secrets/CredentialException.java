package io.continuum.broker.app.secrets;

import java.io.Serial;

/**
 * The credential cannot be loaded or is invalid. The message says what is wrong and where the
 * credential comes from; it never contains the value.
 */
public final class CredentialException extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message description without the credential value
     */
    public CredentialException(String message) {
        super(message);
    }
}
