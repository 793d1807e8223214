package io.continuum.broker.app.secrets;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;

import io.continuum.broker.app.config.CredentialLocation;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.InvalidCredentialException;

/**
 * Loads the bearer credential (the relay's {@link Credential}, handed to it as is) from its configured location
 * at every call, so a rotated Secret
 * applies at the next session attempt without a restart (R-SEC-14). A file may end in one newline
 * (LF or CRLF), which is stripped; an environment value is taken as is.
 */
public final class CredentialSource {
    private final CredentialLocation location;
    private final Map<String, String> environment;

    private CredentialSource(CredentialLocation location, Map<String, String> environment) {
        this.location = location;
        this.environment = Map.copyOf(environment);
    }

    /**
     * A source reading the process environment for {@link CredentialLocation.Env}.
     *
     * @param location configured location
     * @return source
     */
    public static CredentialSource create(CredentialLocation location) {
        return new CredentialSource(location, System.getenv());
    }

    /**
     * A source with an injected environment (tests).
     *
     * @param location    configured location
     * @param environment environment variables
     * @return source
     */
    public static CredentialSource create(CredentialLocation location, Map<String, String> environment) {
        return new CredentialSource(location, environment);
    }

    /**
     * Where the credential comes from (safe to log).
     *
     * @return location
     */
    public CredentialLocation location() {
        return location;
    }

    /**
     * Reads and validates the credential now.
     *
     * @return the credential
     * @throws CredentialException what is wrong, never the value
     */
    public Credential load() throws CredentialException {
        return switch (location) {
            case CredentialLocation.File f -> fromFile(f.path());
            case CredentialLocation.Env e -> fromEnv(e.name());
        };
    }

    private static Credential fromFile(Path path) throws CredentialException {
        String where = "file " + path;
        byte[] bytes;
        try (InputStream in = Files.newInputStream(path)) {
            // Read one byte past the largest legal size (plus CRLF) so oversize is detected without slurping.
            bytes = in.readNBytes(Credential.MAX_BYTES + 3);
        } catch (NoSuchFileException e) {
            throw new CredentialException("credential " + where + " does not exist");
        } catch (IOException e) {
            throw new CredentialException("credential " + where + " cannot be read: " + e.getClass().getSimpleName());
        }
        int len = bytes.length;
        if (len > Credential.MAX_BYTES + 2) {
            throw new CredentialException("credential from " + where + " is over " + (Credential.MAX_BYTES + 2)
                                                  + " bytes, needs " + Credential.MIN_BYTES + ".."
                                                  + Credential.MAX_BYTES);
        }
        if (len >= 2 && bytes[len - 2] == '\r' && bytes[len - 1] == '\n') {
            len -= 2;
        } else if (len >= 1 && bytes[len - 1] == '\n') {
            len -= 1;
        }
        byte[] value = Arrays.copyOf(bytes, len);
        try {
            return validated(value, where);
        } finally {
            Arrays.fill(value, (byte) 0);
            Arrays.fill(bytes, (byte) 0);
        }
    }

    private Credential fromEnv(String name) throws CredentialException {
        String where = "environment variable " + name;
        String v = environment.get(name);
        if (v == null) {
            throw new CredentialException("credential " + where + " is not set");
        }
        for (int i = 0; i < v.length(); i++) {
            if (v.charAt(i) > 0x7e) {
                throw new CredentialException("credential from " + where + " has a character outside visible ASCII"
                                                      + " (0x21..0x7E) at offset " + i);
            }
        }
        return validated(v.getBytes(StandardCharsets.US_ASCII), where);
    }

    private static Credential validated(byte[] value, String where) throws CredentialException {
        try {
            return Credential.of(value);
        } catch (InvalidCredentialException e) {
            throw new CredentialException("credential from " + where + " " + e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "CredentialSource[" + location + "]";
    }
}
