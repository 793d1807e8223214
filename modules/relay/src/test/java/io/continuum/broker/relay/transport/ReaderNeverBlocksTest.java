package io.continuum.broker.relay.transport;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.transport.TransportFixture.WAIT;
import static io.continuum.broker.relay.transport.TransportFixture.endpoint;
import static io.continuum.broker.relay.transport.TransportFixture.probe;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 55 item 4: the connection's reader never writes to the socket; its answers (PING and SETTINGS
 * acknowledgements, WINDOW_UPDATEs, RST_STREAMs) go through a flusher thread, and what waits unwritten is bounded.
 * A router stops reading while the broker writes a stream's DATA, so the broker's socket blocks, and then floods
 * PINGs: the broker keeps reading them, and once more than 10,000 answers wait (CVE-2019-9512) it ends the connection
 * with ENHANCE_YOUR_CALM. Before, the reader blocked on the first acknowledgement it tried to write: it read nothing
 * more, the router's own writes blocked, and only the keepalive's timeout ended the connection.
 */
class ReaderNeverBlocksTest {
    private static final int STREAM = 1;

    @Test
    void aRouterThatStopsReadingAndFloodsPingsIsCutOffWithEnhanceYourCalm() throws Exception {
        try (RawH2Peer peer = RawH2Peer.start(TransportFixture.SERVER, Map.of());
             BusConnection connection = TransportFixture.connector().connect(endpoint(peer.busUrl()))) {
            RawH2Peer.Connection wire = peer.accept(WAIT);
            BusStream stream = TransportFixture.openAnswered(connection, wire, 1);
            wire.sendWindowUpdate(0, 1 << 30);
            wire.sendWindowUpdate(STREAM, 1 << 30);
            assertTrue(probe(connection).ping(WAIT));
            AtomicReference<TransportException> ended = new AtomicReference<>();
            connection.onClose(ended::set);

            wire.stopReading();
            Thread writer = Thread.ofVirtual().start(() -> { // until its socket blocks, then until the end
                byte[] chunk = new byte[64 * 1024];
                try {
                    while (true) {
                        stream.write(ByteBuffer.wrap(chunk));
                    }
                } catch (TransportException e) {
                    // the connection ended
                }
            });
            Thread flood = Thread.ofVirtual().start(() -> {
                try {
                    for (int batch = 0; batch < 1_000 && ended.get() == null; batch++) {
                        int first = batch * 1_000;
                        wire.sendTogether(w -> {
                            for (int i = 0; i < 1_000; i++) {
                                w.ping(false, first + i);
                            }
                        });
                    }
                } catch (java.io.IOException | RuntimeException e) {
                    // the broker closed the connection
                }
            });
            await(() -> ended.get() != null, "the broker ends the connection");
            assertTrue(ended.get().getMessage().contains("control frames wait"), ended.get().getMessage());
            writer.join(WAIT);
            flood.join(WAIT);
        }
    }
}
