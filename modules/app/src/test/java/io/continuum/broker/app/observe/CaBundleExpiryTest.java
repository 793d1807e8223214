package io.continuum.broker.app.observe;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import io.continuum.broker.app.secrets.CaBundleSource;
import io.continuum.broker.app.testsupport.TestCertificates;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ca_bundle_not_after_timestamp_seconds}: the earliest expiry in the file, re-read at most once per interval. */
class CaBundleExpiryTest {
    private static final Instant NOW = Instant.parse("2026-12-01T00:00:00Z");

    @Test
    void earliestNotAfterOfTheBundleIsReadAgainAfterTheIntervalAndKeptWhenAReadFails(@TempDir Path dir)
            throws Exception {
        Instant early = Instant.parse("2027-01-10T00:00:00Z");
        Instant late = Instant.parse("2030-01-01T00:00:00Z");
        Path file = dir.resolve("ca.pem");
        Files.writeString(file, TestCertificates.pem(TestCertificates.cert("CN=late", late))
                + TestCertificates.pem(TestCertificates.cert("CN=early", early)));
        MutableClock clock = new MutableClock(NOW);
        CaBundleExpiry expiry = new CaBundleExpiry(CaBundleSource.create(dir.resolve("ca.pem"), clock), clock,
                                                   Duration.ofMinutes(1));
        assertEquals(early.getEpochSecond(), expiry.getAsDouble(), 1.0, "the earliest of the two");

        // rotated: not seen until the interval has passed
        Instant rotated = Instant.parse("2028-06-01T00:00:00Z");
        Files.writeString(file, TestCertificates.pem(TestCertificates.cert("CN=new", rotated)));
        assertEquals(early.getEpochSecond(), expiry.getAsDouble(), 1.0);
        clock.now = NOW.plusSeconds(60);
        assertEquals(rotated.getEpochSecond(), expiry.getAsDouble(), 1.0);

        // a failed read keeps the last value: the alert does not go quiet because the file broke
        Files.writeString(file, "not a bundle");
        clock.now = NOW.plusSeconds(120);
        assertEquals(rotated.getEpochSecond(), expiry.getAsDouble(), 1.0);
    }

    @Test
    void nanUntilTheFirstSuccessfulRead(@TempDir Path dir) {
        CaBundleExpiry expiry = new CaBundleExpiry(CaBundleSource.create(dir.resolve("missing.pem")),
                                                   Clock.fixed(NOW, ZoneOffset.UTC), Duration.ofMinutes(1));
        assertTrue(Double.isNaN(expiry.getAsDouble()));
    }

    private static final class MutableClock extends Clock {
        volatile Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }
}
