package io.continuum.broker.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.testing.pki.ServerIdentity;

import static io.continuum.broker.bench.LoadHarness.WAIT;

/** A stunnel4 server (TLS, ephemeral certificate) in front of the publisher and a client for the SUB. */
final class StunnelRoute implements Route {
    private final Path work;
    private final Process serverProc;
    private final Process clientProc;
    private final int clientPort;

    StunnelRoute(int pubPort, ServerIdentity server, Path work) throws Exception {
        this.work = work;
        Path cert = work.resolve("cert.pem");
        Path key = work.resolve("key.pem");
        if (!Files.exists(key)) {
            Files.write(cert, server.certificatePem());
            String pem = "-----BEGIN PRIVATE KEY-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                    .encodeToString(server.key().getEncoded())
                    + "\n-----END PRIVATE KEY-----\n";
            Files.writeString(key, pem);
        }
        int serverPort = freePort();
        clientPort = freePort();
        Path sconf = work.resolve("server-" + serverPort + ".conf");
        Files.writeString(sconf, String.join("\n",
                "foreground = yes", "pid =", "debug = 3",
                "[bench-server]",
                "accept = 127.0.0.1:" + serverPort,
                "connect = 127.0.0.1:" + pubPort,
                "cert = " + cert, "key = " + key,
                "socket = l:TCP_NODELAY=1", "socket = r:TCP_NODELAY=1", ""));
        Path cconf = work.resolve("client-" + clientPort + ".conf");
        Files.writeString(cconf, String.join("\n",
                "foreground = yes", "pid =", "debug = 3",
                "[bench-client]", "client = yes",
                "accept = 127.0.0.1:" + clientPort,
                "connect = 127.0.0.1:" + serverPort,
                "socket = l:TCP_NODELAY=1", "socket = r:TCP_NODELAY=1", ""));
        serverProc = stunnel(sconf);
        clientProc = stunnel(cconf);
        awaitListening(serverPort);
        awaitListening(clientPort);
    }

    private Process stunnel(Path conf) throws IOException {
        return new ProcessBuilder("stunnel4", conf.toString())
                .redirectErrorStream(true)
                .redirectOutput(work.resolve(conf.getFileName() + ".log").toFile())
                .start();
    }

    @Override
    public String endpoint() {
        return "tcp://127.0.0.1:" + clientPort;
    }

    @Override
    public void close() {
        for (Process p : List.of(clientProc, serverProc)) {
            p.destroy();
            try {
                if (!p.waitFor(5, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void awaitListening(int port) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        // "ss" would avoid the probe connection; a probe to stunnel is harmless (it closes at once)
        while (System.nanoTime() < deadline) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
                return;
            } catch (IOException notYet) {
                Thread.sleep(10);
            }
        }
        throw new IllegalStateException("stunnel did not listen on " + port);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
