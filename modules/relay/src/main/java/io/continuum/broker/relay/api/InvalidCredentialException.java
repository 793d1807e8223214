package io.continuum.broker.relay.api;

import java.io.Serial;

/** A credential value breaks the rules of {@link Credential}; the message never contains the value. */
public final class InvalidCredentialException extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * @param problem what is wrong, phrased to follow the credential's source ("is 3 bytes, needs 32..512")
     */
    public InvalidCredentialException(String problem) {
        super(problem);
    }
}
