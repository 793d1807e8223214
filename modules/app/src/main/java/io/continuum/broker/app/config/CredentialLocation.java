package io.continuum.broker.app.config;

import java.nio.file.Path;

/**
 * Where the bearer credential is read from ({@code credential_file} or {@code credential_env},
 * R-SEC-14). Holds only the location, never the value.
 */
public sealed interface CredentialLocation {

    /** The variable used when neither {@code credential_file} nor {@code credential_env} is configured. */
    String DEFAULT_ENV = "CONTINUUM_EVENT_BROKER_CREDENTIAL";

    /**
     * A mounted file, re-read at every session attempt.
     *
     * @param path file path
     */
    record File(Path path) implements CredentialLocation {
        @Override
        public String toString() {
            return "file " + path;
        }
    }

    /**
     * An environment variable.
     *
     * @param name variable name
     */
    record Env(String name) implements CredentialLocation {
        @Override
        public String toString() {
            return "environment variable " + name;
        }
    }
}
