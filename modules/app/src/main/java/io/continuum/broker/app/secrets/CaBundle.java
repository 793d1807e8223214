package io.continuum.broker.app.secrets;

import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;

/**
 * A parsed CA bundle: the certificates that verify the router (bus-protocol-v1.md section 1).
 *
 * @param path         file it was read from
 * @param certificates every certificate, in file order, at least one
 */
public record CaBundle(Path path, List<X509Certificate> certificates) {

    /**
     * Defensive copy.
     */
    public CaBundle {
        certificates = List.copyOf(certificates);
    }

    /**
     * One line per certificate for {@code --check-config} and the startup log.
     *
     * @param now the time expiry is judged against
     * @return summaries in file order
     */
    public List<Summary> summaries(Instant now) {
        return certificates.stream()
                .map(c -> new Summary(c.getSubjectX500Principal().getName(),
                                      c.getNotAfter().toInstant(),
                                      c.getNotAfter().toInstant().isBefore(now)))
                .toList();
    }

    /**
     * What an operator needs to know about one certificate.
     *
     * @param subject  subject distinguished name
     * @param notAfter expiry
     * @param expired  whether it has expired
     */
    public record Summary(String subject, Instant notAfter, boolean expired) {
        @Override
        public String toString() {
            return "subject=\"" + subject + "\" not_after=" + notAfter + (expired ? " EXPIRED" : "");
        }
    }
}
