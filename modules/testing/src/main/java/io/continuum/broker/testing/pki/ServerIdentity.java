package io.continuum.broker.testing.pki;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * A server certificate, its private key and the issuing CA.
 *
 * @param certificate the server certificate
 * @param key         its private key
 * @param ca          the issuing CA certificate
 */
public record ServerIdentity(X509Certificate certificate, PrivateKey key, X509Certificate ca) {
    /** The key alias Helidon's keystore loading expects by default. */
    public static final String KEY_ALIAS = "1";

    /**
     * @param password store and key password
     * @return a PKCS#12 store holding the key under alias {@code "1"} with the chain (server, CA)
     */
    public KeyStore keyStore(char[] password) {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry(KEY_ALIAS, key, password, new Certificate[] {certificate, ca});
            return store;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * @return a server-side TLS context for raw test servers
     */
    public SSLContext serverContext() {
        try {
            char[] password = "test".toCharArray();
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keyStore(password), password);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(kmf.getKeyManagers(), null, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return the server certificate as PEM */
    public byte[] certificatePem() {
        return EphemeralPki.pem(certificate);
    }
}
