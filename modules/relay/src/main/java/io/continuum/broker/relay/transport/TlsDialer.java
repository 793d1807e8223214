package io.continuum.broker.relay.transport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * TCP connect and TLS handshake to the bus: TLS 1.3 or 1.2 only, ALPN {@code h2} only, the server certificate
 * verified against the configured trust and the name {@link BusEndpoint#verifiedName()}, TCP_NODELAY on (small
 * bus frames must not wait for Nagle). Plaintext is impossible here.
 */
final class TlsDialer {
    private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private TlsDialer() {
    }

    /** A connected, handshaken socket pair. */
    record Dialed(Socket tcp, SSLSocket tls) {
    }

    /**
     * @param endpoint      where to connect
     * @param deadlineNanos {@link System#nanoTime()} deadline for TCP and TLS together
     * @param created       receives the TCP socket as soon as it exists, so a watchdog can close it
     * @return the TLS socket, read timeout cleared
     * @throws BusConnectException with kind TCP or TLS
     */
    static Dialed dial(BusEndpoint endpoint, long deadlineNanos, Consumer<Socket> created) throws BusConnectException {
        SSLContext context = sslContext(endpoint.trust());
        Socket tcp = new Socket();
        created.accept(tcp);
        try {
            tcp.setTcpNoDelay(true);
            tcp.setKeepAlive(true);
            InetSocketAddress address = new InetSocketAddress(endpoint.host(), endpoint.port());
            if (address.isUnresolved()) {
                throw new BusConnectException(BusConnectException.Kind.TCP,
                        "cannot resolve " + endpoint.host(), null);
            }
            tcp.connect(address, remainingMillis(deadlineNanos));
        } catch (java.net.SocketTimeoutException e) {
            closeQuietly(tcp);
            throw new BusConnectException(BusConnectException.Kind.TIMEOUT, "TCP connect timed out", e);
        } catch (IOException e) {
            closeQuietly(tcp);
            throw new BusConnectException(BusConnectException.Kind.TCP,
                    "connect to " + endpoint.host() + ":" + endpoint.port() + " failed: " + e.getMessage(), e);
        } catch (BusConnectException e) {
            closeQuietly(tcp);
            throw e;
        }
        SSLSocket tls = null;
        // The socket's read timeout bounds each read, not the handshake: a server that trickles a byte now and then
        // would hold it for as long as it likes. The watchdog closes the socket at the deadline, whatever is reading.
        HandshakeWatchdog watchdog = HandshakeWatchdog.start(tcp, deadlineNanos);
        try {
            String name = endpoint.verifiedName();
            tls = (SSLSocket) context.getSocketFactory().createSocket(tcp, name, endpoint.port(), true);
            SSLParameters parameters = tls.getSSLParameters();
            parameters.setProtocols(PROTOCOLS);
            parameters.setApplicationProtocols(new String[] {"h2"});
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            if (!isIpLiteral(name)) {
                parameters.setServerNames(List.of(new SNIHostName(name)));
            }
            tls.setSSLParameters(parameters);
            tls.setUseClientMode(true);
            tcp.setSoTimeout(remainingMillis(deadlineNanos));
            tls.startHandshake();
            String alpn = tls.getApplicationProtocol();
            if (!"h2".equals(alpn)) {
                throw new BusConnectException(BusConnectException.Kind.TLS,
                        "no ALPN h2: the server selected " + (alpn == null || alpn.isEmpty() ? "no protocol" : alpn)
                                + " (the bus needs HTTP/2)", null);
            }
            if (!watchdog.finish()) {
                throw new java.net.SocketTimeoutException("the deadline passed as the handshake finished");
            }
            tcp.setSoTimeout(0);
            return new Dialed(tcp, tls);
        } catch (IOException | IllegalArgumentException e) {
            boolean timedOut = !watchdog.finish() || e instanceof java.net.SocketTimeoutException;
            closeQuietly(tls);
            closeQuietly(tcp);
            if (timedOut) {
                throw new BusConnectException(BusConnectException.Kind.TIMEOUT, "TLS handshake timed out (not done"
                        + " within bus_connect_timeout)", e);
            }
            throw new BusConnectException(BusConnectException.Kind.TLS,
                    describeFailure(e, endpoint.verifiedName()) + " (TLS handshake failed: " + e.getMessage() + ")",
                    e);
        } catch (BusConnectException e) {
            watchdog.finish();
            closeQuietly(tls);
            closeQuietly(tcp);
            throw e;
        }
    }

    // Names what failed in words an operator can act on, first in the log line (the JDK's own message, which
    // follows, is long and often says only "PKIX path validation failed"). Reads only exception types,
    // certificate-path reasons and the JDK's alert texts: nothing here can carry a header value or a credential.
    /**
     * @param failure      what the handshake threw
     * @param verifiedName the name the certificate was checked against ({@code tls_server_name} or the URL host)
     * @return a short description, e.g. {@code "server certificate expired"}
     */
    static String describeFailure(Throwable failure, String verifiedName) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof CertificateExpiredException) {
                return "server certificate expired";
            }
            if (t instanceof CertificateNotYetValidException) {
                return "server certificate not yet valid";
            }
            if (t instanceof CertPathValidatorException v) {
                if (v.getReason() == CertPathValidatorException.BasicReason.EXPIRED) {
                    return "server certificate expired";
                }
                if (v.getReason() == CertPathValidatorException.BasicReason.NOT_YET_VALID) {
                    return "server certificate not yet valid";
                }
            }
        }
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = String.valueOf(t.getMessage());
            if (t instanceof CertPathBuilderException || message.contains("PKIX path building failed")) {
                return "server certificate not trusted: no path to the configured CA (wrong CA?)";
            }
        }
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = String.valueOf(t.getMessage());
            String lower = message.toLowerCase(Locale.ROOT);
            if (lower.contains("no subject alternative") || lower.contains("no name matching")) {
                return "name mismatch: the server certificate is not valid for " + verifiedName;
            }
            if (lower.contains("no_application_protocol") || lower.contains("no application protocol")) {
                return "no ALPN h2: the server offers no protocol in common with h2 (the bus needs HTTP/2)";
            }
            if (lower.contains("protocol_version") || lower.contains("no appropriate protocol")
                    || lower.contains("not accepted by client preferences")) {
                return "no common TLS version: the broker speaks TLS 1.3 and 1.2 only";
            }
            if (lower.contains("unsupported or unrecognized ssl message")
                    || lower.contains("plaintext connection")) {
                return "not a TLS server: the peer answered in plaintext (an HTTP/1.1 server on the bus port?)";
            }
            if (lower.contains("certificate_unknown") || lower.contains("bad_certificate")) {
                return "server certificate rejected";
            }
        }
        if (failure instanceof SSLHandshakeException) {
            return "TLS handshake refused";
        }
        if (failure instanceof java.io.EOFException || String.valueOf(failure.getMessage()).contains("closed")) {
            return "connection closed during the TLS handshake";
        }
        return "TLS handshake error";
    }

    static SSLContext sslContext(TlsTrust trust) throws BusConnectException {
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            switch (trust) {
                case TlsTrust.SystemRoots ignored -> tmf.init((KeyStore) null);
                case TlsTrust.Certificates ca -> {
                    KeyStore store = KeyStore.getInstance("PKCS12");
                    store.load(null, null);
                    int i = 0;
                    for (Certificate certificate : ca.certificates()) {
                        store.setCertificateEntry("ca-" + i++, certificate);
                    }
                    tmf.init(store);
                }
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new BusConnectException(BusConnectException.Kind.TLS, "cannot load trust: " + e.getMessage(), e);
        }
    }

    static boolean isIpLiteral(String host) {
        return host.indexOf(':') >= 0 || host.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'));
    }

    static int remainingMillis(long deadlineNanos) throws BusConnectException {
        long remaining = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        if (remaining <= 0) {
            throw new BusConnectException(BusConnectException.Kind.TIMEOUT, "connect timeout expired", null);
        }
        return (int) Math.min(Integer.MAX_VALUE, remaining);
    }

    static void closeQuietly(Socket socket) {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
