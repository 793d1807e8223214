package io.continuum.broker.training;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * The training router's TLS identity: a self-signed certificate for {@code localhost} and {@code 127.0.0.1}, made by
 * the running JDK's own {@code keytool} (the runtime image links it), valid for two days and thrown away with the
 * work directory. The broker trusts it through {@code ca_file} ({@link #caPem}), as it trusts a router's CA.
 *
 * @param caPem  the certificate, PEM, for the broker's {@code ca_file}
 * @param server the router's TLS context
 */
record TrainingIdentity(Path caPem, SSLContext server) {
    private static final String ALIAS = "training-router";

    /** Makes the key pair and certificate in {@code dir} ({@code router.p12}, {@code ca.pem}). */
    static TrainingIdentity create(Path dir) throws IOException, GeneralSecurityException, InterruptedException {
        Path keystore = dir.resolve("router.p12");
        Path pem = dir.resolve("ca.pem");
        byte[] secret = new byte[18];
        new SecureRandom().nextBytes(secret);
        String password = HexFormat.of().formatHex(secret);
        keytool("-genkeypair", "-alias", ALIAS, "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=localhost", "-ext", "san=dns:localhost,ip:127.0.0.1", "-validity", "2",
                "-storetype", "PKCS12", "-keystore", keystore.toString(), "-storepass", password);
        keytool("-exportcert", "-rfc", "-alias", ALIAS, "-keystore", keystore.toString(), "-storepass", password,
                "-file", pem.toString());
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            ks.load(in, password.toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, password.toCharArray());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), null, null);
        return new TrainingIdentity(pem, context);
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        Path tool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        List<String> command = new java.util.ArrayList<>(List.of(tool.toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] output = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException(tool + " " + args[0] + " failed: " + new String(output, StandardCharsets.UTF_8).strip());
        }
    }
}
