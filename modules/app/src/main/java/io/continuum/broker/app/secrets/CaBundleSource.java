package io.continuum.broker.app.secrets;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the {@code ca_file} PEM bundle at every call, so a rotated bundle applies at the next
 * session attempt. Every {@code CERTIFICATE} block must parse; any other PEM block type (a key, for
 * instance), an empty file or a file without PEM blocks is an error. A bundle whose every
 * certificate has expired is an error too (it could never verify the router).
 */
public final class CaBundleSource {
    private static final int MAX_BYTES = 4 << 20;
    private static final Pattern BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]*?)-----END \\1-----");

    private final Path path;
    private final Clock clock;

    private CaBundleSource(Path path, Clock clock) {
        this.path = path;
        this.clock = clock;
    }

    /**
     * A source for a bundle file.
     *
     * @param path PEM file
     * @return source
     */
    public static CaBundleSource create(Path path) {
        return new CaBundleSource(path, Clock.systemUTC());
    }

    /**
     * A source with an injected clock (tests of expiry).
     *
     * @param path  PEM file
     * @param clock clock
     * @return source
     */
    public static CaBundleSource create(Path path, Clock clock) {
        return new CaBundleSource(path, clock);
    }

    /**
     * The bundle file.
     *
     * @return path
     */
    public Path path() {
        return path;
    }

    /**
     * Reads and parses the bundle now.
     *
     * @return the bundle
     * @throws CaBundleException what is wrong
     */
    public CaBundle load() throws CaBundleException {
        String where = "CA bundle " + path;
        String text;
        try {
            if (Files.size(path) > MAX_BYTES) {
                throw new CaBundleException(where + " is larger than 4 MiB");
            }
            text = Files.readString(path, StandardCharsets.ISO_8859_1);
        } catch (NoSuchFileException e) {
            throw new CaBundleException(where + " does not exist");
        } catch (IOException e) {
            throw new CaBundleException(where + " cannot be read: " + e.getClass().getSimpleName());
        }
        if (text.isBlank()) {
            throw new CaBundleException(where + " is empty");
        }
        CertificateFactory factory;
        try {
            factory = CertificateFactory.getInstance("X.509");
        } catch (CertificateException e) {
            throw new IllegalStateException("X.509 certificate factory unavailable", e);
        }
        List<X509Certificate> certs = new ArrayList<>();
        Matcher m = BLOCK.matcher(text);
        int index = 0;
        while (m.find()) {
            index++;
            String type = m.group(1);
            if (!type.equals("CERTIFICATE")) {
                throw new CaBundleException(where + " block " + index + " is a " + type + ", not a CERTIFICATE");
            }
            try {
                byte[] der = Base64.getMimeDecoder().decode(m.group(2));
                certs.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(der)));
            } catch (IllegalArgumentException | CertificateException | ClassCastException e) {
                throw new CaBundleException(where + " block " + index + " is not a valid X.509 certificate");
            }
        }
        if (certs.isEmpty()) {
            throw new CaBundleException(where + " holds no PEM CERTIFICATE block");
        }
        CaBundle bundle = new CaBundle(path, certs);
        if (bundle.summaries(clock.instant()).stream().allMatch(CaBundle.Summary::expired)) {
            throw new CaBundleException(where + ": every certificate has expired");
        }
        return bundle;
    }
}
