package io.continuum.broker.testing.pki;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.Security;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * A real JDK TLS server that speaks only a legacy protocol version (e.g. {@code TLSv1.1}), for the "router offers
 * only TLS 1.1" failure. The JDK disables TLS 1.0 and 1.1 through the process-wide security property
 * {@code jdk.tls.disabledAlgorithms}, read once per JVM, so the server runs in a child JVM started with that
 * property relaxed: the test JVM's own TLS stack is untouched.
 * <p>
 * The child prints its port, then one line per accepted connection with its own monotonic time (so gaps between
 * a client's attempts are measured where they arrive), and exits when its standard input closes.
 */
public final class LegacyTlsServer implements AutoCloseable {
    private final Process process;
    private final Path dir;
    private final int port;
    private final List<Long> acceptNanos = new CopyOnWriteArrayList<>();
    private final LinkedBlockingQueue<Long> accepts = new LinkedBlockingQueue<>();
    private final Thread reader;

    private LegacyTlsServer(Process process, Path dir, BufferedReader out) throws IOException {
        this.process = process;
        this.dir = dir;
        String first = out.readLine();
        if (first == null || !first.startsWith("port=")) {
            process.destroyForcibly();
            throw new IOException("legacy TLS server did not start: " + first);
        }
        this.port = Integer.parseInt(first.substring("port=".length()));
        this.reader = Thread.ofVirtual().name("legacy-tls-server-out").start(() -> {
            try {
                String line;
                while ((line = out.readLine()) != null) {
                    if (line.startsWith("accepted=")) {
                        long nanos = Long.parseLong(line.substring("accepted=".length()));
                        acceptNanos.add(nanos);
                        accepts.add(nanos);
                    }
                }
            } catch (IOException ignored) {
                // the child exited
            }
        });
    }

    /**
     * Starts a child JVM serving TLS with only {@code protocol} enabled, on a loopback port.
     *
     * @param identity server certificate and key
     * @param protocol the one protocol version to enable, e.g. {@code "TLSv1.1"}
     * @return the running server
     * @throws IOException when the child cannot be started
     */
    public static LegacyTlsServer start(ServerIdentity identity, String protocol) throws IOException {
        Path dir = Files.createTempDirectory("legacy-tls");
        char[] password = "legacy".toCharArray();
        Path store = dir.resolve("server.p12");
        try (OutputStream out = Files.newOutputStream(store)) {
            identity.keyStore(password).store(out, password);
        } catch (java.security.GeneralSecurityException e) {
            throw new IOException(e);
        }
        Path security = dir.resolve("java.security");
        Files.writeString(security, "jdk.tls.disabledAlgorithms=" + relaxed(protocol) + "\n");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process process = new ProcessBuilder(java, "-Xmx64m", "-XX:TieredStopAtLevel=1",
                "-Djava.security.properties=" + security,
                "-cp", System.getProperty("java.class.path"), LegacyTlsServer.class.getName(),
                store.toString(), new String(password), protocol)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        return new LegacyTlsServer(process, dir,
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)));
    }

    /** The current disabled-algorithms list without the legacy protocol and the SHA-1 signatures it needs. */
    private static String relaxed(String protocol) {
        String current = Security.getProperty("jdk.tls.disabledAlgorithms");
        return Arrays.stream(current == null ? new String[0] : current.split(","))
                .map(String::trim)
                .filter(t -> !t.equals(protocol) && !t.contains("sha1 usage HandshakeSignature"))
                .collect(Collectors.joining(", "));
    }

    /** @return the loopback port */
    public int port() {
        return port;
    }

    /** @return {@code https://localhost:<port>} */
    public URI busUrl() {
        return URI.create("https://localhost:" + port);
    }

    /**
     * Waits for the next accepted connection.
     *
     * @param timeout how long to wait
     * @return the child's monotonic time of the accept, in nanoseconds (only differences are meaningful)
     */
    public long awaitAccept(Duration timeout) {
        try {
            Long nanos = accepts.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (nanos == null) {
                throw new AssertionError("no connection reached the legacy TLS server within " + timeout);
            }
            return nanos;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** @return the child's monotonic accept times so far */
    public List<Long> acceptNanos() {
        return new ArrayList<>(acceptNanos);
    }

    @Override
    public void close() {
        try {
            process.getOutputStream().close(); // the child exits on EOF
        } catch (IOException ignored) {
            // already gone
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            reader.join(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                Files.deleteIfExists(p);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The child: {@code <pkcs12 file> <password> <protocol>}.
     *
     * @param args arguments
     * @throws Exception on any failure (the parent sees the child exit)
     */
    public static void main(String[] args) throws Exception {
        char[] password = args[1].toCharArray();
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(Path.of(args[0]))) {
            store.load(in, password);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(store, password);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), null, null);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (SSLServerSocket server = (SSLServerSocket) context.getServerSocketFactory()
                .createServerSocket(0, 16, InetAddress.getLoopbackAddress())) {
            server.setEnabledProtocols(new String[] {args[2]});
            out.println("port=" + server.getLocalPort());
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    System.in.transferTo(OutputStream.nullOutputStream());
                } catch (IOException ignored) {
                    // parent gone
                }
                System.exit(0);
            });
            while (true) {
                SSLSocket socket = (SSLSocket) server.accept();
                out.println("accepted=" + System.nanoTime());
                Thread.ofVirtual().start(() -> {
                    try (socket) {
                        socket.setSoTimeout(30_000);
                        socket.startHandshake();
                        socket.getInputStream().read();
                    } catch (IOException expected) {
                        // a modern client refuses the legacy version
                    }
                });
            }
        }
    }
}
