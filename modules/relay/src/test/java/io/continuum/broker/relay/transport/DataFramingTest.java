package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * How outbound DATA is framed and written, seen by a bare HTTP/2 peer: frames of at most 16 KiB, and streams that
 * are ready at once share one socket write.
 */
class DataFramingTest {

    @ParameterizedTest
    @EnumSource(TransportFixture.Connections.class)
    void dataFramesAreAtMostSixteenKibWhenThePeerAnnouncesNoLargerSize(TransportFixture.Connections kind)
            throws Exception {
        assertEquals(List.of(16_384, 16_384, 16_384, 10_848), frameLengths(kind, Map.of(), 60_000));
    }

    @ParameterizedTest
    @EnumSource(TransportFixture.Connections.class)
    void dataFramesStayAtSixteenKibWhateverThePeerAllows(TransportFixture.Connections kind) throws Exception {
        assertEquals(List.of(16_384, 16_384, 16_384, 10_848), frameLengths(kind, Map.of(0x5, 65_536L), 60_000));
    }

    private static List<Integer> frameLengths(TransportFixture.Connections kind, Map<Integer, Long> settings,
                                              int total) throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, settings);
             BusConnection connection = kind.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream stream = connection.open(dataStream(1), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
            byte[] body = TransportFixture.pattern(0, total, 7);
            stream.write(ByteBuffer.wrap(body)); // within the initial 65,535-byte windows
            List<Integer> lengths = new ArrayList<>();
            ByteBuffer seen = ByteBuffer.allocate(total);
            while (seen.position() < total) {
                RawH2Peer.Frame data = wire.next(f -> f.type() == RawH2Peer.Frame.DATA, WAIT);
                lengths.add(data.payload().length);
                seen.put(data.payload());
            }
            assertArrayEquals(body, seen.array());
            return lengths;
        }
    }

    /**
     * Eight streams whose writes queue while the frame writer is busy go out in one socket write, each stream's
     * frames intact. The writer is kept busy by a frame write whose skip check (run under the writer's lock)
     * waits until all eight are queued. Helidon's connection only: it tests that connection's own frame writer; the
     * one-owner connection's {@code FrameWriter} is held to the same by {@code FrameRoundTripTest}
     * ({@code framesAddedWhileAFlushWritesGoOutWithTheNextFlushInOneWrite}).
     */
    @Test
    void streamsReadyAtOnceShareOneSocketWrite() throws Exception {
        int streams = 8;
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = new HelidonBusConnector().connect(endpoint(peer.busUrl()))) {
            HelidonBusConnection h = (HelidonBusConnection) connection;
            RawH2Peer.Connection wire = peer.accept(WAIT);
            List<BusStream> open = new ArrayList<>();
            for (int i = 0; i < streams; i++) {
                open.add(connection.open(dataStream(i + 1), WAIT));
                wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS, WAIT);
            }
            SerializedFrameWriter writer = h.writer();
            long writesBefore = writer.dataWrites();
            CountDownLatch lockHeld = new CountDownLatch(1);
            Thread holder = Thread.ofVirtual().start(() -> writer.writeOwnFrameUnless(() -> {
                lockHeld.countDown();
                TransportFixture.eventually(() -> writer.pendingData() == streams, WAIT, "every stream queued");
                return true; // write nothing: the lock was only held
            }, Http2Frames.ping(1, false), null, 0, 0));
            assertTrue(lockHeld.await(WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS));
            List<Thread> writers = new ArrayList<>();
            for (int i = 0; i < streams; i++) {
                BusStream s = open.get(i);
                byte[] body = TransportFixture.pattern(0, 1000 + i, i);
                writers.add(Thread.ofVirtual().start(() -> {
                    try {
                        s.write(ByteBuffer.wrap(body));
                    } catch (TransportException e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            assertTrue(holder.join(WAIT));
            for (Thread t : writers) {
                assertTrue(t.join(WAIT));
            }
            assertEquals(writesBefore + 1, writer.dataWrites(), "one socket write for all eight streams");
            Map<Integer, byte[]> received = new java.util.HashMap<>();
            for (int i = 0; i < streams; i++) {
                RawH2Peer.Frame data = wire.next(f -> f.type() == RawH2Peer.Frame.DATA, WAIT);
                received.put(data.streamId(), data.payload());
            }
            for (int i = 0; i < streams; i++) {
                int id = (int) open.get(i).id();
                assertArrayEquals(TransportFixture.pattern(0, 1000 + i, i), received.get(id), "stream " + id);
            }
        }
    }
}
