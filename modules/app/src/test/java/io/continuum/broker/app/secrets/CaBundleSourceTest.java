package io.continuum.broker.app.secrets;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.continuum.broker.app.testsupport.TestCertificates.cert;
import static io.continuum.broker.app.testsupport.TestCertificates.pem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The {@code ca_file} bundle: every certificate parsed and reported with subject and expiry;
 * unreadable, empty, non-PEM or non-certificate content is an error; re-read at every load.
 */
class CaBundleSourceTest {
    private static final Instant NOW = Instant.parse("2026-06-01T00:00:00Z");
    private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

    @TempDir
    Path dir;

    @Test
    void parsesEveryCertificateAndReportsSubjectAndExpiry() throws Exception {
        Path f = write(pem(cert("CN=Root A", NOW.plusSeconds(86_400))) + pem(cert("CN=Root B", NOW.minusSeconds(1))));
        CaBundle b = CaBundleSource.create(f, CLOCK).load();
        assertEquals(2, b.certificates().size());
        assertEquals("subject=\"CN=Root A\" not_after=2026-06-02T00:00:00Z", b.summaries(NOW).get(0).toString());
        assertEquals("subject=\"CN=Root B\" not_after=2026-05-31T23:59:59Z EXPIRED",
                     b.summaries(NOW).get(1).toString());
    }

    @Test
    void rejectsMissingEmptyNonPemAndKeys() throws Exception {
        Path missing = dir.resolve("absent.pem");
        assertEquals("CA bundle " + missing + " does not exist", message(missing));
        assertEquals("CA bundle " + write("  \n") + " is empty", message(dir.resolve("ca.pem")));
        Path der = dir.resolve("ca.der");
        Files.write(der, cert("CN=X", NOW.plusSeconds(60)).getEncoded());
        assertEquals("CA bundle " + der + " holds no PEM CERTIFICATE block", message(der));
        Path key = write("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
        assertEquals("CA bundle " + key + " block 1 is a PRIVATE KEY, not a CERTIFICATE", message(key));
        Path garbage = write(pem(cert("CN=Ok", NOW.plusSeconds(60)))
                                     + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
        assertEquals("CA bundle " + garbage + " block 2 is not a valid X.509 certificate", message(garbage));
    }

    @Test
    void aBundleWhoseEveryCertificateExpiredIsAnError() throws Exception {
        Path f = write(pem(cert("CN=Old", NOW.minusSeconds(10))));
        assertEquals("CA bundle " + f + ": every certificate has expired", message(f));
    }

    @Test
    void isReReadAtEveryLoad() throws Exception {
        Path f = write(pem(cert("CN=First", NOW.plusSeconds(600))));
        CaBundleSource source = CaBundleSource.create(f, CLOCK);
        assertEquals("CN=First", source.load().summaries(NOW).getFirst().subject());
        write(pem(cert("CN=Second", NOW.plusSeconds(600))));
        assertEquals("CN=Second", source.load().summaries(NOW).getFirst().subject());
    }

    private String message(Path f) {
        return assertThrows(CaBundleException.class, () -> CaBundleSource.create(f, CLOCK).load()).getMessage();
    }

    private Path write(String text) throws Exception {
        Path f = dir.resolve("ca.pem");
        Files.writeString(f, text);
        return f;
    }
}
