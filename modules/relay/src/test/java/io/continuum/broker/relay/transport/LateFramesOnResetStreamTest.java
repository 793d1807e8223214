package io.continuum.broker.relay.transport;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.dataStream;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * RFC 9113 sections 5.1 and 5.4.2: after this side resets a stream, frames the peer sent before it saw the reset
 * (DATA, HEADERS, WINDOW_UPDATE, its own RST_STREAM) are ignored, never a connection error; their DATA is
 * credited back to the connection window, and an ignored header block is still HPACK-decoded so the shared
 * dynamic table stays in step for every other stream.
 *
 * <p>White-box: the peer's frame is made to arrive exactly while the cancelling thread stands right after its
 * RST_STREAM was written (the {@link ConnectionProbe#afterResetWritten} seam), and the seam returns only once the
 * connection's reader has processed it (two PING round trips: the second acknowledgement is read in a later
 * socket read than the injected frame, so the reader has handled that frame by then): the stream is gone from the
 * connection's map but its slot is not yet free. A DATA with END_STREAM or a HEADERS block there must not fail
 * the connection.
 */
class LateFramesOnResetStreamTest {
    private static final int RESET = 1;
    private static final int OTHER = 3;
    /** A new field: the codec writes it as a literal with incremental indexing, so it enters the dynamic table. */
    private static final HeaderField INDEXING_FIELD = new HeaderField("x-late", "yes");
    private static final HeaderField STATUS_200 = new HeaderField(":status", "200");

    enum Late {
        DATA_END_STREAM(false),
        DATA(false),
        TRAILERS_END_STREAM(true),
        HEADERS_NO_END_STREAM(true),
        WINDOW_UPDATE(false),
        RST_STREAM(false);

        final boolean indexes;

        Late(boolean indexes) {
            this.indexes = indexes;
        }

        void send(RawH2Peer.Connection wire) throws IOException {
            switch (this) {
                case DATA_END_STREAM -> wire.sendData(RESET, new byte[1000], true);
                case DATA -> wire.sendData(RESET, new byte[1000], false);
                case TRAILERS_END_STREAM -> wire.sendHeaders(RESET, true, INDEXING_FIELD);
                case HEADERS_NO_END_STREAM -> wire.sendHeaders(RESET, false, INDEXING_FIELD);
                case WINDOW_UPDATE -> wire.sendWindowUpdate(RESET, 5000);
                case RST_STREAM -> wire.sendReset(RESET, ErrorCode.CANCEL.code());
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Late.class)
    void aFrameArrivingRightAfterOurResetIsIgnoredAndTheConnectionLives(Late late) throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            ConnectionProbe h = TransportFixture.probe(connection);
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream reset = connection.open(dataStream(1), WAIT);
            BusStream other = connection.open(dataStream(2), WAIT);
            wire.next(f -> f.type() == RawH2Peer.Frame.HEADERS && f.streamId() == OTHER, WAIT);
            wire.sendStatus200(RESET, false);
            assertEquals(200, reset.awaitResponseHead(WAIT).status());
            wire.sendData(RESET, new byte[100], false);
            assertEquals(100, reset.read().remaining()); // read, never released: the reset must credit it

            AtomicBoolean hookRan = new AtomicBoolean();
            h.afterResetWritten(reset, () -> {
                try {
                    late.send(wire);
                    h.ping(WAIT);
                    h.ping(WAIT);
                    hookRan.set(true);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            reset.cancel();
            assertTrue(hookRan.get(), "the late frame was injected right after the RST_STREAM");
            RawH2Peer.Frame rst = wire.next(f -> f.type() == RawH2Peer.Frame.RST_STREAM, WAIT);
            assertEquals(RESET, rst.streamId());
            assertTrue(connection.isOpen(), "a late " + late + " on a reset stream must not end the connection");

            // the other stream is untouched, and decodes a header the ignored block put into the dynamic table (the
            // codec sends it as index 62 now)
            HeaderField[] head = late.indexes ? new HeaderField[] {STATUS_200, INDEXING_FIELD}
                    : new HeaderField[] {STATUS_200};
            wire.sendHeaders(OTHER, false, head);
            ResponseHead response = other.awaitResponseHead(WAIT);
            assertEquals(200, response.status());
            if (late.indexes) {
                assertTrue(response.headers().stream()
                                .anyMatch(x -> x.name().equals("x-late") && x.value().equals("yes")),
                        "HPACK state followed the ignored header block: " + response.headers());
            }
            byte[] payload = "still flowing".getBytes(StandardCharsets.US_ASCII);
            wire.sendData(OTHER, payload, true);
            ByteBuffer chunk = other.read();
            assertEquals(payload.length, chunk.remaining());
            other.release(payload.length);
            assertNull(other.read());
            other.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
            other.endRequest();
            RawH2Peer.Frame data = wire.next(f -> f.type() == RawH2Peer.Frame.DATA && f.streamId() == OTHER, WAIT);
            assertEquals(3, data.payload().length);

            assertTrue(h.ping(WAIT), "the connection still answers");
            assertTrue(connection.isOpen());
            assertEquals(0, h.connectionBytesUncredited(),
                    "DATA of the reset stream, read or late, is credited back to the connection window");
            assertEquals(0, h.streamsInUse());
            assertEquals(0, h.streamsTracked(), "neither stream is remembered");
        }
    }
}
