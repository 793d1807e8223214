package io.continuum.broker.app.testsupport;

import java.math.BigInteger;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Self-signed certificates for CA bundle tests.
 */
public final class TestCertificates {
    private TestCertificates() {
    }

    /**
     * A PEM block of a certificate.
     *
     * @return PEM text ending in a newline
     * @throws Exception on encoding failure
     */
    public static String pem(X509Certificate c) throws Exception {
        return "-----BEGIN CERTIFICATE-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(c.getEncoded())
                + "\n-----END CERTIFICATE-----\n";
    }

    /**
     * A self-signed EC certificate valid for 30 days up to {@code notAfter}.
     *
     * @param notAfter expiry
     * @return certificate
     * @throws Exception on generation failure
     */
    public static X509Certificate cert(String subject, Instant notAfter) throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(256);
        KeyPair kp = g.generateKeyPair();
        X500Name name = new X500Name(subject);
        var builder = new JcaX509v3CertificateBuilder(name, BigInteger.ONE,
                                                      Date.from(notAfter.minusSeconds(86_400L * 30)),
                                                      Date.from(notAfter), name, kp.getPublic());
        return new JcaX509CertificateConverter()
                .getCertificate(builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(kp.getPrivate())));
    }
}
