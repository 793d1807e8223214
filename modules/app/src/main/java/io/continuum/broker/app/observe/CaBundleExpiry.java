package io.continuum.broker.app.observe;

import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.DoubleSupplier;

import io.continuum.broker.app.secrets.CaBundle;
import io.continuum.broker.app.secrets.CaBundleException;
import io.continuum.broker.app.secrets.CaBundleSource;

/**
 * The value of {@code ca_bundle_not_after_timestamp_seconds}: the earliest {@code not_after} among the CA
 * bundle's certificates, in Unix seconds. Read from the file at scrape time, at most once per refresh
 * interval, so a rotated bundle shows without waiting for the next session attempt (which reads the file
 * again anyway). A read that fails (file gone, every certificate expired) keeps the last value read: the
 * alert keeps firing on the bundle the broker last could use instead of going quiet. NaN until the first
 * successful read.
 */
public final class CaBundleExpiry implements DoubleSupplier {
    /** How often a scrape may re-read the file. */
    public static final Duration DEFAULT_REFRESH = Duration.ofMinutes(1);

    private final CaBundleSource source;
    private final Clock clock;
    private final Duration refresh;
    private Instant readAt;
    private double value = Double.NaN;

    /**
     * A reader of {@code source}.
     *
     * @param source  the configured {@code ca_file}
     * @param clock   clock for the refresh interval
     * @param refresh how often the file may be re-read
     */
    public CaBundleExpiry(CaBundleSource source, Clock clock, Duration refresh) {
        this.source = Objects.requireNonNull(source, "source");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.refresh = Objects.requireNonNull(refresh, "refresh");
    }

    @Override
    public synchronized double getAsDouble() {
        Instant now = clock.instant();
        if (readAt == null || !now.isBefore(readAt.plus(refresh))) {
            readAt = now;
            try {
                value = earliestNotAfter(source.load());
            } catch (CaBundleException e) {
                // keep the last value read; the session attempt reports the failure itself
            }
        }
        return value;
    }

    static double earliestNotAfter(CaBundle bundle) {
        long earliest = Long.MAX_VALUE;
        for (X509Certificate c : bundle.certificates()) {
            earliest = Math.min(earliest, c.getNotAfter().getTime());
        }
        return earliest / 1000.0;
    }
}
