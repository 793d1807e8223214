package io.continuum.broker.relay.transport;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.h2.Http2;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static io.continuum.broker.relay.transport.TransportFixture.probe;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 55 items 1 and 2, RFC 9113 section 10.5: what a router's frames make the broker spend follows bytes and need,
 * not frame counts. Router-to-publisher DATA is held as bytes (R-BUF 5: 10,000 one-byte frames are one 16 KiB
 * segment, not 10,000 objects, and one read takes them all); a reader is signalled once per wait, not per frame; a
 * connection WINDOW_UPDATE wakes only the writers waiting for the connection's window, an INITIAL_WINDOW_SIZE change
 * only those waiting for their stream's.
 */
class SmallFramesCostTest {
    private static final int FRAMES = 10_000;
    private static final int STREAM = 1;

    @Test
    void tenThousandOneByteFramesAreHeldAsBytesAndReadInOneChunk() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream stream = TransportFixture.openAnswered(connection, wire, 1);
            wire.sendTogether(w -> {
                for (int i = 0; i < FRAMES; i++) {
                    w.data(STREAM, false, new byte[] {(byte) i}, 0, 1);
                }
            });
            assertTrue(probe(connection).ping(WAIT)); // read in order: every DATA frame is in
            assertEquals(1, probe(connection).inboundSegments(stream), "10,000 bytes in one segment");
            ByteBuffer chunk = stream.read();
            assertEquals(FRAMES, chunk.remaining(), "one read takes every byte, not one frame's");
            for (int i = 0; i < FRAMES; i++) {
                assertEquals((byte) i, chunk.get(), "byte " + i);
            }
            stream.release(FRAMES);
        }
    }

    @Test
    void aWaitingReaderIsSignalledOncePerWaitNotOncePerFrame() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream stream = TransportFixture.openAnswered(connection, wire, 1);
            long before = probe(connection).readerWakeUps();
            List<Integer> reads = new ArrayList<>();
            Thread reader = Thread.ofVirtual().start(() -> {
                try {
                    int total = 0;
                    while (total < FRAMES) {
                        ByteBuffer chunk = stream.read();
                        reads.add(chunk.remaining());
                        total += chunk.remaining();
                        stream.release(chunk.remaining());
                    }
                } catch (TransportException e) {
                    throw new AssertionError(e);
                }
            });
            await(() -> reader.getState() == Thread.State.WAITING, "the reader waits for bytes");
            wire.sendTogether(w -> {
                for (int i = 0; i < FRAMES; i++) {
                    w.data(STREAM, false, new byte[] {(byte) i}, 0, 1);
                }
            });
            reader.join(WAIT);
            long wakeUps = probe(connection).readerWakeUps() - before;
            assertTrue(wakeUps >= 1 && wakeUps <= reads.size(), wakeUps + " signals for " + reads.size() + " reads of "
                    + FRAMES + " frames: " + reads);
        }
    }

    /**
     * Twenty writers wait for their streams' windows (SETTINGS_INITIAL_WINDOW_SIZE 10), one for the connection's: a
     * WINDOW_UPDATE on stream 0 signals that one, then a larger INITIAL_WINDOW_SIZE signals the twenty. Before, one
     * condition was shared and every parked writer woke on each.
     */
    @Test
    void windowUpdatesWakeOnlyTheWritersWaitingForThatWindow() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of(Http2.SETTINGS_INITIAL_WINDOW_SIZE, 10L));
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            List<Thread> small = new ArrayList<>();
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                BusStream s = connection.open(dataStream(i + 1), WAIT, () -> true);
                writes.add(write(s, 11, small));
            }
            // each small writer has sent its stream's 10 bytes and waits for its stream's window, not the connection's
            await(() -> totalReceived(wire) == 20 * 10, "the small writers' windows used up");
            int bigId = 41;
            BusStream big = connection.open(dataStream(21), WAIT, () -> true);
            wire.sendWindowUpdate(bigId, 70_000);
            assertTrue(probe(connection).ping(WAIT));
            List<Thread> bigWriter = new ArrayList<>();
            int connectionLeft = 65_535 - 20 * 10;
            CompletableFuture<Void> bigWrite = write(big, connectionLeft + 500, bigWriter);
            await(() -> totalReceived(wire) == 20 * 10 + connectionLeft, "every window used up");
            await(() -> small.stream().allMatch(t -> t.getState() == Thread.State.WAITING)
                    && bigWriter.getFirst().getState() == Thread.State.WAITING, "all 21 writers wait");

            long before = probe(connection).writerWakeUps();
            wire.sendWindowUpdate(0, 1_000);
            bigWrite.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertEquals(1, probe(connection).writerWakeUps() - before, "only the connection window's waiter");

            wire.sendSettings(Map.of(Http2.SETTINGS_INITIAL_WINDOW_SIZE, 20L)); // every stream's window grows by 10
            for (CompletableFuture<Void> w : writes) {
                w.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            }
            assertEquals(21, probe(connection).writerWakeUps() - before, "then the twenty, once each");
            await(() -> totalReceived(wire) == 20 * 11 + connectionLeft + 500, "every byte arrived");
        }
    }

    private static CompletableFuture<Void> write(BusStream stream, int bytes, List<Thread> threads) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread t = Thread.ofVirtual().unstarted(() -> {
            try {
                stream.write(ByteBuffer.wrap(new byte[bytes]));
                done.complete(null);
            } catch (TransportException | RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
        threads.add(t);
        t.start();
        return done;
    }

    private static long totalReceived(RawH2Peer.Connection wire) {
        long total = 0;
        for (int id = 1; id <= 41; id += 2) {
            total += wire.dataReceived(id);
        }
        return total;
    }
}
