package io.continuum.broker.testing.pki;

import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throw-away certificate authority for tests: EC P-256 keys, a self-signed CA, and server certificates for
 * any DNS names and IP addresses with any validity window (expired and not-yet-valid ones for TLS failure tests).
 */
public final class EphemeralPki {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

    private final KeyPair caKeys;
    private final X509Certificate caCertificate;

    private EphemeralPki(String caName) {
        this.caKeys = newKeyPair();
        Instant now = Instant.now();
        X500Name subject = new X500Name("CN=" + caName);
        try {
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject, serial(),
                    Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(2))), subject,
                    caKeys.getPublic());
            JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            builder.addExtension(Extension.subjectKeyIdentifier, false,
                    utils.createSubjectKeyIdentifier(caKeys.getPublic()));
            this.caCertificate = sign(builder, caKeys);
        } catch (GeneralSecurityException | CertIOException e) {
            throw new IllegalStateException("cannot create test CA", e);
        }
    }

    /** @return a new CA named {@code continuum-test-ca} */
    public static EphemeralPki create() {
        return new EphemeralPki("continuum-test-ca");
    }

    /**
     * @param caName common name of the CA
     * @return a new CA
     */
    public static EphemeralPki create(String caName) {
        return new EphemeralPki(caName);
    }

    /** @return the CA certificate */
    public X509Certificate caCertificate() {
        return caCertificate;
    }

    /** @return the CA certificate as PEM, what the broker reads from {@code ca_file} */
    public byte[] caPem() {
        return pem(caCertificate);
    }

    /**
     * A server certificate valid from an hour ago for a day, for {@code localhost}, {@code 127.0.0.1} and
     * {@code ::1}.
     *
     * @return the certificate and its key
     */
    public ServerIdentity localhostServer() {
        return server(List.of("localhost", "127.0.0.1", "::1"));
    }

    /**
     * @param names DNS names and IP literals for the subject alternative names
     * @return a certificate valid from an hour ago for a day
     */
    public ServerIdentity server(List<String> names) {
        Instant now = Instant.now();
        return server(names, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)));
    }

    /**
     * @param names     DNS names and IP literals for the subject alternative names
     * @param notBefore start of validity (in the future for a not-yet-valid certificate)
     * @param notAfter  end of validity (in the past for an expired one)
     * @return the certificate and its key
     */
    public ServerIdentity server(List<String> names, Instant notBefore, Instant notAfter) {
        KeyPair keys = newKeyPair();
        try {
            String cn = names.isEmpty() ? "server" : names.getFirst();
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(caCertificate, serial(),
                    Date.from(notBefore), Date.from(notAfter), new X500Name("CN=" + cn), keys.getPublic());
            JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
            builder.addExtension(Extension.authorityKeyIdentifier, false,
                    utils.createAuthorityKeyIdentifier(caCertificate));
            List<GeneralName> alternatives = new ArrayList<>();
            for (String name : names) {
                alternatives.add(isIpLiteral(name)
                        ? new GeneralName(GeneralName.iPAddress, InetAddress.getByName(name).getHostAddress())
                        : new GeneralName(GeneralName.dNSName, name));
            }
            if (!alternatives.isEmpty()) {
                builder.addExtension(Extension.subjectAlternativeName, false,
                        new GeneralNames(alternatives.toArray(GeneralName[]::new)));
            }
            return new ServerIdentity(sign(builder, caKeys), keys.getPrivate(), caCertificate);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot issue test server certificate", e);
        }
    }

    /**
     * @return it as one PEM block
     */
    public static byte[] pem(X509Certificate certificate) {
        try {
            String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                    .encodeToString(certificate.getEncoded());
            return ("-----BEGIN CERTIFICATE-----\n" + body + "\n-----END CERTIFICATE-----\n")
                    .getBytes(StandardCharsets.US_ASCII);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean isIpLiteral(String name) {
        return name.indexOf(':') >= 0 || name.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'));
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, KeyPair signer)
            throws GeneralSecurityException {
        try {
            return new JcaX509CertificateConverter()
                    .getCertificate(builder.build(new JcaContentSignerBuilder("SHA256withECDSA")
                            .build(signer.getPrivate())));
        } catch (OperatorCreationException e) {
            throw new GeneralSecurityException(e);
        }
    }

    private static KeyPair newKeyPair() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static BigInteger serial() {
        return BigInteger.valueOf(SERIAL.incrementAndGet());
    }
}
