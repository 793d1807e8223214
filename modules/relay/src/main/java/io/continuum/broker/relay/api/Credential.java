package io.continuum.broker.relay.api;

import java.nio.charset.StandardCharsets;

/**
 * A validated bearer credential: 32..512 bytes of visible ASCII (bus-protocol-v1.md section 1). The app reads
 * it and the relay sends it, as this one type: {@link #toString()} is a redaction and the value leaves only
 * through {@link #reveal()}, for the sensitive {@code authorization} header (R-SEC 14).
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
     * Validates a credential value.
     *
     * @param value candidate bytes (the caller strips a trailing newline and clears its copy)
     * @return the credential
     * @throws InvalidCredentialException saying what is wrong, never the value
     */
    public static Credential of(byte[] value) throws InvalidCredentialException {
        if (value.length < MIN_BYTES || value.length > MAX_BYTES) {
            throw new InvalidCredentialException("is " + value.length + " bytes, needs " + MIN_BYTES + ".."
                    + MAX_BYTES);
        }
        for (int i = 0; i < value.length; i++) {
            int b = value[i] & 0xff;
            if (b < 0x21 || b > 0x7e) {
                throw new InvalidCredentialException("has a byte outside visible ASCII (0x21..0x7E) at offset " + i
                        + describe(b));
            }
        }
        return new Credential(new String(value, StandardCharsets.US_ASCII));
    }

    /**
     * Validates a credential held as text (tests and tools; the app reads bytes).
     *
     * @param value candidate
     * @return the credential
     * @throws InvalidCredentialException saying what is wrong, never the value
     */
    public static Credential of(String value) throws InvalidCredentialException {
        byte[] bytes = new byte[value.length()];
        for (int i = 0; i < bytes.length; i++) {
            char c = value.charAt(i);
            // Anything past ASCII becomes DEL, which the byte check refuses at the same offset.
            bytes[i] = c > 0x7e ? (byte) 0x7f : (byte) c;
        }
        return of(bytes);
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
     * The value, for the {@code authorization: Bearer} header only: never log, print or put it in a message.
     *
     * @return the secret
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
