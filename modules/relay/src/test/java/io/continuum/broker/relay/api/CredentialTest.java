package io.continuum.broker.relay.api;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The one credential type of app and relay: bus-protocol-v1.md section 1, R-SEC 14. */
class CredentialTest {
    private static final String VALID = "0123456789abcdefghijklmnopqrstuvwxyz";

    @Test
    void aValidValueIsRevealedOnlyByRevealAndNeverPrinted() throws Exception {
        Credential c = Credential.of(VALID);
        assertEquals(VALID, c.reveal());
        assertEquals(VALID.length(), c.length());
        assertEquals("Credential[redacted]", c.toString());
        assertFalse(String.valueOf(c).contains(VALID));
    }

    @Test
    void lengthBoundsAreThirtyTwoAndFiveHundredTwelveBytes() throws Exception {
        Credential.of("x".repeat(Credential.MIN_BYTES));
        Credential.of("x".repeat(Credential.MAX_BYTES));
        assertEquals("is 31 bytes, needs 32..512", assertThrows(InvalidCredentialException.class,
                () -> Credential.of("x".repeat(31))).getMessage());
        assertThrows(InvalidCredentialException.class, () -> Credential.of("x".repeat(513)));
    }

    @Test
    void aCharacterOutsideVisibleAsciiIsNamedByOffsetNeverByValue() {
        String secret = VALID + "é";
        InvalidCredentialException e = assertThrows(InvalidCredentialException.class, () -> Credential.of(secret));
        assertEquals("has a byte outside visible ASCII (0x21..0x7E) at offset 36", e.getMessage());
        assertEquals("has a byte outside visible ASCII (0x21..0x7E) at offset 3 (a space)",
                assertThrows(InvalidCredentialException.class, () -> Credential.of(
                        ("abc " + VALID).getBytes(StandardCharsets.US_ASCII))).getMessage());
    }
}
