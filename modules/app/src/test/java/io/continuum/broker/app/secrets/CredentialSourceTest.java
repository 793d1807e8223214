package io.continuum.broker.app.secrets;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import io.continuum.broker.app.config.CredentialLocation;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.testing.secrets.Secrets;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * R-SEC-14 and bus-protocol-v1.md section 1: the credential is 32..512 bytes of visible ASCII from a
 * file (one trailing LF or CRLF stripped) or a variable, re-read at every load, and never shown.
 */
class CredentialSourceTest {
    private static final String SECRET = Secrets.register("s3cr3t-" + "A".repeat(40) + "-end");

    @TempDir
    Path dir;

    private CredentialSource file(byte[] content) throws Exception {
        Path f = dir.resolve("credential");
        Files.write(f, content);
        return CredentialSource.create(new CredentialLocation.File(f));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "\n", "\r\n"})
    void aFileMayEndInOneNewlineWhichIsStripped(String ending) throws Exception {
        assertEquals(SECRET, file((SECRET + ending).getBytes(StandardCharsets.US_ASCII)).load().reveal());
    }

    @Test
    void aSecondNewlineIsNotStripped() throws Exception {
        Path f = dir.resolve("credential");
        CredentialException e = assertThrows(CredentialException.class,
                                             () -> file((SECRET + "\n\n").getBytes(StandardCharsets.US_ASCII)).load());
        assertEquals("credential from file " + f + " has a byte outside visible ASCII (0x21..0x7E) at offset "
                             + SECRET.length() + " (a line feed; only one trailing newline is stripped)",
                     e.getMessage());
    }

    @Test
    void lengthBoundsAre32To512Bytes() throws Exception {
        Path f = dir.resolve("credential");
        assertEquals(32, file("a".repeat(32).getBytes(StandardCharsets.US_ASCII)).load().length());
        assertEquals(512, file("a".repeat(512).getBytes(StandardCharsets.US_ASCII)).load().length());
        assertEquals("credential from file " + f + " is 31 bytes, needs 32..512",
                     assertThrows(CredentialException.class,
                                  () -> file("a".repeat(31).getBytes(StandardCharsets.US_ASCII)).load()).getMessage());
        assertEquals("credential from file " + f + " is 513 bytes, needs 32..512",
                     assertThrows(CredentialException.class,
                                  () -> file("a".repeat(513).getBytes(StandardCharsets.US_ASCII)).load()).getMessage());
        assertEquals("credential from file " + f + " is over 514 bytes, needs 32..512",
                     assertThrows(CredentialException.class,
                                  () -> file("a".repeat(10_000).getBytes(StandardCharsets.US_ASCII)).load())
                             .getMessage());
    }

    @Test
    void onlyVisibleAsciiIsAllowed() throws Exception {
        byte[] withSpace = ("a".repeat(20) + " " + "b".repeat(20)).getBytes(StandardCharsets.US_ASCII);
        CredentialException e = assertThrows(CredentialException.class, () -> file(withSpace).load());
        assertEquals("credential from file " + dir.resolve("credential")
                             + " has a byte outside visible ASCII (0x21..0x7E) at offset 20 (a space)", e.getMessage());
        byte[] utf8 = ("a".repeat(40) + "é").getBytes(StandardCharsets.UTF_8);
        assertThrows(CredentialException.class, () -> file(utf8).load());
    }

    @Test
    void aMissingFileIsReportedWithItsPath() {
        Path f = dir.resolve("absent");
        CredentialException e = assertThrows(CredentialException.class,
                                             () -> CredentialSource.create(new CredentialLocation.File(f)).load());
        assertEquals("credential file " + f + " does not exist", e.getMessage());
    }

    @Test
    void theFileIsReReadAtEveryLoadSoRotationNeedsNoRestart() throws Exception {
        CredentialSource source = file(SECRET.getBytes(StandardCharsets.US_ASCII));
        assertEquals(SECRET, source.load().reveal());
        String rotated = "rotated-" + "B".repeat(40);
        Files.writeString(dir.resolve("credential"), rotated + "\n");
        assertEquals(rotated, source.load().reveal());
    }

    @Test
    void fromEnvironmentVariable() throws Exception {
        CredentialSource s = CredentialSource.create(new CredentialLocation.Env("TOKEN"), Map.of("TOKEN", SECRET));
        assertEquals(SECRET, s.load().reveal());
        CredentialException unset = assertThrows(CredentialException.class,
                () -> CredentialSource.create(new CredentialLocation.Env("TOKEN"), Map.of()).load());
        assertEquals("credential environment variable TOKEN is not set", unset.getMessage());
        CredentialException trailingNewline = assertThrows(CredentialException.class,
                () -> CredentialSource.create(new CredentialLocation.Env("TOKEN"), Map.of("TOKEN", SECRET + "\n"))
                        .load());
        assertEquals("credential from environment variable TOKEN has a byte outside visible ASCII (0x21..0x7E) at"
                             + " offset " + SECRET.length() + " (a line feed; only one trailing newline is stripped)",
                     trailingNewline.getMessage());
    }

    @Test
    void theValueNeverAppearsInToStringOrErrors() throws Exception {
        Credential c = file(SECRET.getBytes(StandardCharsets.US_ASCII)).load();
        assertEquals("Credential[redacted]", c.toString());
        assertFalse(String.valueOf(c).contains(SECRET));
        // An invalid credential close to a real one: the message must not contain any of it.
        String almost = SECRET + " x";
        CredentialException e = assertThrows(CredentialException.class,
                () -> CredentialSource.create(new CredentialLocation.Env("T"), Map.of("T", almost)).load());
        assertFalse(e.getMessage().contains("s3cr3t"), e.getMessage());
        CredentialException shortOne = assertThrows(CredentialException.class,
                () -> CredentialSource.create(new CredentialLocation.Env("T"), Map.of("T", "s3cr3t-short")).load());
        assertFalse(shortOne.getMessage().contains("s3cr3t"), shortOne.getMessage());
    }
}
