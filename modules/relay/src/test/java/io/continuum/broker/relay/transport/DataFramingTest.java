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

import io.continuum.broker.h2.Http2;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

/**
 * How outbound DATA is framed, seen by a bare HTTP/2 peer: frames of at most 16 KiB. That frames ready at once
 * share one socket write is the frame writer's ({@code FrameRoundTripTest} in the h2 module).
 */
class DataFramingTest {

    @Test
    void dataFramesAreAtMostSixteenKibWhenThePeerAnnouncesNoLargerSize() throws Exception {
        assertEquals(List.of(16_384, 16_384, 16_384, 10_848), frameLengths(Map.of(), 60_000));
    }

    @Test
    void dataFramesStayAtSixteenKibWhateverThePeerAllows() throws Exception {
        assertEquals(List.of(16_384, 16_384, 16_384, 10_848), frameLengths(Map.of(Http2.SETTINGS_MAX_FRAME_SIZE, 65_536L), 60_000));
    }

    private static List<Integer> frameLengths(Map<Integer, Long> settings, int total) throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, settings);
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
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
}
