package io.continuum.broker.relay.transport;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.ServerIdentity;
import io.continuum.broker.testing.router.RawH2Peer;
import io.continuum.broker.testing.secrets.Secrets;

import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Shared set-up for transport tests: one ephemeral PKI per JVM, endpoints, payload patterns. */
final class TransportFixture {
    static final EphemeralPki PKI = EphemeralPki.create();
    static final ServerIdentity SERVER = PKI.localhostServer();
    static final String CREDENTIAL = Secrets.register("s3cr3t-credential-0123456789abcdef0123");
    static final Duration WAIT = Duration.ofSeconds(20);

    private TransportFixture() {
    }

    static BusConnector connector() {
        return BusConnector.of(TransportSettings.defaults());
    }

    static BusConnector connector(TransportSettings settings) {
        return BusConnector.of(settings);
    }

    /** @return what tests may read of a connection beyond the seam */
    static ConnectionProbe probe(BusConnection connection) {
        return ((Http2BusConnection) connection).probe();
    }

    static BusEndpoint endpoint(URI url) {
        return new BusEndpoint(url, TlsTrust.certificates(List.of(PKI.caCertificate())), null, Duration.ofSeconds(10),
                "continuum-event-broker/test");
    }

    /**
     * Opens data stream {@code id} (the connection's next HTTP/2 stream), has the peer answer it {@code 200} and waits
     * for that head: a stream that takes DATA.
     */
    static BusStream openAnswered(BusConnection connection, RawH2Peer.Connection wire, long id) throws Exception {
        BusStream stream = connection.open(dataStream(id), WAIT, () -> true);
        wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == stream.id(), WAIT);
        wire.sendStatus200((int) stream.id(), false);
        stream.awaitResponseHead(WAIT);
        return stream;
    }

    /** Waits for the client's GOAWAY and checks its error code. */
    static void assertGoAway(RawH2Peer.Connection wire, int code) throws Exception {
        RawH2Peer.Frame goAway = wire.next(f -> f.type() == RawH2Peer.Frame.GOAWAY, WAIT);
        assertEquals(code, ByteBuffer.wrap(goAway.payload(), 4, 4).getInt());
    }

    static StreamRequest dataStream(long id) {
        return new StreamRequest("POST", "/bus/v1/streams/" + id, List.of(
                Header.bearer(CREDENTIAL),
                Header.of("continuum-session-id", "session-1"),
                Header.of("content-type", "application/octet-stream")));
    }

    /** Byte i of a pattern stream: position-dependent so reordering or loss is detected. */
    static byte patternByte(long position, int seed) {
        return (byte) ((position * 31 + seed + (position >>> 8)) & 0xFF);
    }

    static byte[] pattern(long from, int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = patternByte(from + i, seed);
        }
        return b;
    }

    /** Reads a client stream to its end, verifying the pattern and releasing as it goes; returns the count. */
    static long readAllVerified(BusStream stream, int seed) throws TransportException {
        long position = 0;
        ByteBuffer chunk;
        while ((chunk = stream.read()) != null) {
            int n = chunk.remaining();
            for (int i = 0; i < n; i++) {
                if (chunk.get() != patternByte(position + i, seed)) {
                    throw new AssertionError("byte " + (position + i) + " differs");
                }
            }
            position += n;
            stream.release(n);
        }
        return position;
    }

    /** Reads a router-side request body to EOF, verifying the pattern; returns the count. */
    static long readAllVerified(InputStream in, int seed) throws IOException {
        byte[] buffer = new byte[64 * 1024];
        long position = 0;
        int n;
        while ((n = in.read(buffer)) >= 0) {
            for (int i = 0; i < n; i++) {
                if (buffer[i] != patternByte(position + i, seed)) {
                    throw new AssertionError("byte " + (position + i) + " differs");
                }
            }
            position += n;
        }
        return position;
    }

    /** An {@code open()} on its own virtual thread, seen parked while it waits for a stream slot. */
    record WaitingOpen(Thread thread, CompletableFuture<BusStream> stream) {
        BusStream get() throws Exception {
            return stream.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Opens data stream {@code id} on a virtual thread and returns once that thread waits (for a slot). */
    static WaitingOpen openWaitingForSlot(BusConnection connection, long id, String what) {
        CompletableFuture<BusStream> opened = new CompletableFuture<>();
        Thread waiter = Thread.ofVirtual().start(() -> {
            try {
                opened.complete(connection.open(dataStream(id), WAIT));
            } catch (TransportException | RuntimeException e) {
                opened.completeExceptionally(e);
            }
        });
        await(() -> waiter.getState() == Thread.State.WAITING
                || waiter.getState() == Thread.State.TIMED_WAITING, WAIT, what);
        return new WaitingOpen(waiter, opened);
    }
}
