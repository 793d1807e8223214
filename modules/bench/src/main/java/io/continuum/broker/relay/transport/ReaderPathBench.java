package io.continuum.broker.relay.transport;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.h2.Http2Reader;
import io.continuum.broker.h2.Http2Writer;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.ServerIdentity;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The bus connection's reader path per small frame (issue 55 item 7): {@link Http2Reader} parsing each frame and the
 * real {@link Http2BusConnection} handling it, as its reader thread does (this class sits in the transport's package
 * to reach it; the bench runs on the class path). The connection is a real one, TLS on loopback to a peer that sends
 * its SETTINGS and then only reads; the frames come from memory, so what is measured is the reader's work, not the
 * socket's. Per frame, in throughput mode (frames per second on one core):
 * <ul>
 *     <li>{@code oneByteData}: DATA of one byte on an open stream, then what the stream's pump does once per batch
 *     (one read of the batch's bytes, one release, which writes the window updates);</li>
 *     <li>{@code emptyData}: DATA without a byte, two in a row as the bound allows (docs/protocol.md 8b), every third
 *     carrying a byte;</li>
 *     <li>{@code ping}: PING, whose acknowledgement the reader hands to the connection's flusher.</li>
 * </ul>
 * Command: {@code bench/run.sh jmh ReaderPathBench}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ReaderPathBench {
    static final int BATCH = 1_024;
    /** A multiple of 3: batches follow each other without three empty frames in a row. */
    static final int EMPTY_BATCH = 1_023;
    private static final int STREAM = 1;

    private SSLServerSocket listener;
    private Http2BusConnection connection;
    private BusStream stream;
    private byte[] oneByteFrames;
    private byte[] emptyFrames;
    private byte[] pingFrames;
    private int oneBytePerBatch;
    private int bytesPerEmptyBatch;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        EphemeralPki pki = EphemeralPki.create();
        ServerIdentity server = pki.localhostServer();
        listener = (SSLServerSocket) server.serverContext().getServerSocketFactory()
                .createServerSocket(0, 5, InetAddress.getLoopbackAddress());
        SSLParameters parameters = listener.getSSLParameters();
        parameters.setApplicationProtocols(new String[] {"h2"});
        listener.setSSLParameters(parameters);
        Thread.ofVirtual().start(this::drainingPeer);
        BusEndpoint endpoint = new BusEndpoint(URI.create("https://localhost:" + listener.getLocalPort()),
                TlsTrust.certificates(List.of(pki.caCertificate())), null, Duration.ofSeconds(10),
                "continuum-event-broker/bench");
        connection = (Http2BusConnection) BusConnector.of(TransportSettings.defaults()).connect(endpoint);
        stream = connection.open(new StreamRequest("POST", "/bus/v1/streams/1", List.of(
                Header.of("content-type", "application/octet-stream"))), Duration.ofSeconds(10), () -> true);
        // as the reader would
        connection.frameHandler().headers(STREAM, false, List.of(new HeaderField(":status", "200")));
        stream.awaitResponseHead(Duration.ofSeconds(10));
        // the reader's own thread is this one from now on: its answers go to the flusher, as on the real reader
        java.lang.reflect.Field reader = Http2BusConnection.class.getDeclaredField("readerThread");
        reader.setAccessible(true);
        reader.set(connection, Thread.currentThread());

        oneByteFrames = frames(w -> {
            for (int i = 0; i < BATCH; i++) {
                w.data(STREAM, false, new byte[] {(byte) i}, 0, 1);
            }
        });
        oneBytePerBatch = BATCH;
        emptyFrames = frames(w -> {
            for (int i = 0; i < EMPTY_BATCH; i++) {
                w.data(STREAM, false, i % 3 == 2 ? new byte[] {1} : new byte[0], 0, i % 3 == 2 ? 1 : 0);
            }
        });
        bytesPerEmptyBatch = EMPTY_BATCH / 3;
        pingFrames = frames(w -> {
            for (int i = 0; i < BATCH; i++) {
                w.ping(false, i);
            }
        });
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        connection.close();
        listener.close();
    }

    /**
     * Between batches, not measured: the flusher has written every answer of the last one. The reader's cost is what
     * is measured; the flusher's writes run on the other core, and a reader that outran them for long would be
     * the flood the bound on queued answers ends (ENHANCE_YOUR_CALM).
     */
    @TearDown(Level.Invocation)
    public void answersWritten() {
        while (connection.queuedControlFrames() > 0) {
            if (!connection.isOpen()) {
                throw new IllegalStateException("the connection ended: " + connection.failure());
            }
            Thread.onSpinWait();
        }
        if (!connection.isOpen()) {
            throw new IllegalStateException("the connection ended: " + connection.failure());
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void oneByteData() throws Exception {
        readAll(oneByteFrames);
        drain(oneBytePerBatch);
    }

    @Benchmark
    @OperationsPerInvocation(EMPTY_BATCH)
    public void emptyData() throws Exception {
        readAll(emptyFrames);
        drain(bytesPerEmptyBatch);
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void ping() throws Exception {
        readAll(pingFrames);
    }

    private void readAll(byte[] frames) throws Exception {
        Http2Reader reader = new Http2Reader(new ByteArrayInputStream(frames), connection.frameHandler());
        while (reader.nextFrame()) {
            // every frame to the connection's handler
        }
    }

    /** The stream's pump: takes the bytes and releases them (the window updates go to the flusher). */
    private void drain(int bytes) throws TransportException {
        int left = bytes;
        while (left > 0) {
            ByteBuffer chunk = stream.read();
            left -= chunk.remaining();
            stream.release(chunk.remaining());
        }
    }

    private static byte[] frames(java.util.function.Consumer<Http2Writer> writes) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Http2Writer writer = new Http2Writer(out);
        writes.accept(writer);
        writer.flush();
        return out.toByteArray();
    }

    /**
     * The server: its SETTINGS, then it reads every frame, answers the keepalive's PINGs and drops the rest (the
     * broker's acknowledgements and window updates).
     */
    private void drainingPeer() {
        try (SSLSocket socket = (SSLSocket) listener.accept()) {
            socket.startHandshake();
            InputStream in = socket.getInputStream();
            Http2Reader.readClientPreface(in);
            Http2Writer writer = new Http2Writer(socket.getOutputStream());
            writer.settings(Map.of());
            writer.settingsAck();
            writer.windowUpdate(0, 1 << 30);
            writer.flush();
            Http2Reader reader = new Http2Reader(in, new io.continuum.broker.h2.FrameHandler() {
                @Override
                public void ping(boolean ack, long payload) {
                    if (!ack) {
                        writer.ping(true, payload);
                        try {
                            writer.flush();
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    }
                }
            });
            while (reader.nextFrame()) {
                // dropped, but for the keepalive's PINGs
            }
        } catch (Exception e) {
            // the bench is over
        }
    }
}
