package io.continuum.broker.app.secrets;

/**
 * A validated bearer credential: 32..512 bytes of visible ASCII (bus-protocol-v1.md section 1).
 * {@link #toString()} is a redaction; the value leaves this object only through {@link #reveal()},
 * which exists for the one place it belongs: the sensitive {@code authorization} header (R-SEC-14).
 */
public final class Credential {
    /** Shortest valid credential, in bytes. */
    public static final int MIN_BYTES = 32;
    /** Longest valid credential, in bytes. */
    public static final int MAX_BYTES = 512;

    private final String value;

    private Credential(String value) {
        this.value = value;
    }

    /**
     * Validates and wraps a credential value.
     *
     * @param value     candidate, already stripped of the one permitted trailing newline
     * @param whereFrom how the caller names the source in errors, e.g. {@code file /run/secret}
     * @return the credential
     * @throws CredentialException naming what is wrong, never the value
     */
    static Credential of(byte[] value, String whereFrom) throws CredentialException {
        if (value.length < MIN_BYTES || value.length > MAX_BYTES) {
            throw new CredentialException("credential from " + whereFrom + " is " + value.length
                                                  + " bytes, needs " + MIN_BYTES + ".." + MAX_BYTES);
        }
        for (int i = 0; i < value.length; i++) {
            int b = value[i] & 0xff;
            if (b < 0x21 || b > 0x7e) {
                throw new CredentialException("credential from " + whereFrom + " has a byte outside visible ASCII"
                                                      + " (0x21..0x7E) at offset " + i
                                                      + describe(b));
            }
        }
        return new Credential(new String(value, java.nio.charset.StandardCharsets.US_ASCII));
    }

    private static String describe(int b) {
        return switch (b) {
            case ' ' -> " (a space)";
            case '\n' -> " (a line feed; only one trailing newline is stripped)";
            case '\r' -> " (a carriage return)";
            case '\t' -> " (a tab)";
            default -> "";
        };
    }

    /**
     * The credential value, for the {@code authorization: Bearer} header only. Never log, print,
     * or put it in a message.
     *
     * @return the secret value
     */
    public String reveal() {
        return value;
    }

    /**
     * Length in bytes (safe to report).
     *
     * @return 32..512
     */
    public int length() {
        return value.length();
    }

    @Override
    public String toString() {
        return "Credential[redacted]";
    }
}
