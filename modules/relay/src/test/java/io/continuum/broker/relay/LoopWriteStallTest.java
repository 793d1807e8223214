package io.continuum.broker.relay;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.List;
import java.util.Map;

import io.continuum.broker.h2.Http2;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.api.Cidr;
import io.continuum.broker.relay.api.RelayStatus;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawBusRouter.Windows;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * R-BUF 4 when the readiness loop writes: a publisher's chunk is written to the router on the loop's own thread
 * while the stream's writer is idle and the windows are open (one wake-up per message). A router may keep its
 * windows wide open and still stop reading its TCP socket; that write then waits for the socket, and the loop must
 * go on reading every other publisher all the same (it moves to a new thread), so their bytes are queued, counted
 * against their budgets and, past them, end their streams {@code buffer_overflow}, never left unread.
 */
@ExtendWith(LeakCheck.class)
class LoopWriteStallTest {
    /** More than the loopback socket buffers on both sides can hold: the flooding stream's write must wait. */
    private static final long FLOOD_BYTES = 256L * 1024 * 1024;
    /** What the other publisher sends once the socket is stuck: within its stream's 1 MiB budget. */
    private static final int OTHER_BYTES = 256 * 1024;

    @Test
    void aLoopWriteWaitingForTheSocketLeavesTheOtherPublishersRead() throws Exception {
        // Windows of 512 MiB on every stream and 1 GiB more on the connection and the session stream: nothing but
        // the socket holds a write back (a stream window past 2^31 - 1 would be the router's flow-control error).
        Map<Integer, Long> settings = Map.of(Http2.SETTINGS_INITIAL_WINDOW_SIZE, 512L * 1024 * 1024);
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 50);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.start(settings,
                     c -> c.allowedCidrs(List.of(Cidr.parse("127.0.0.0/8"))))) {
            raw.view().advertise(NAMESPACE, "127.0.0.1", publisher.port());
            try (RawBusRouter session = RawBusRouter.accept(raw.peer(), WAIT, Windows.OPEN_SESSION_ONLY)
                    .sendSessionHead()) {
                Target target = new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port());
                session.sendPacked(FrameCodec.encode(RawBusRouter.welcome("stalled")),
                        FrameCodec.encode(new Frame.Subscribe(1, target)));
                session.answerNextDataStream(WAIT);
                Socket flooding = publisher.awaitConnection();
                session.await(Frame.StreamOpened.class, f -> f.streamId() == 1, WAIT);
                session.send(new Frame.Subscribe(3, target));
                session.answerNextDataStream(WAIT);
                Socket other = publisher.awaitConnection();
                session.await(Frame.StreamOpened.class, f -> f.streamId() == 3, WAIT);

                session.wire().stopReading();
                Thread flood = Thread.ofVirtual().start(() -> send(flooding, FLOOD_BYTES));
                // Its bytes fill the sockets and a write waits for the router; reading on, the broker queues the
                // rest, and the queue nears its budget (then overflows). A loop stuck in that write would read
                // nothing more: nothing would be queued.
                await(() -> raw.metrics().get("stream_buffer_near_budget_total") >= 1,
                        "the flooding publisher is still read once a write of its bytes waits for the socket");
                Thread.ofVirtual().start(() -> send(other, OTHER_BYTES));

                // read: written out before the socket filled, or queued (charged to its budget) behind it
                await(() -> bytesRead(raw, 3) >= OTHER_BYTES,
                        "the other publisher is read while a write waits for the socket");
                assertTrue(stream(raw, 3) != null, "within its budget, the other stream stays open");
                flooding.close();
                other.close();
                flood.join();
            }
        }
    }

    private static void send(Socket socket, long total) {
        byte[] block = new byte[64 * 1024];
        try {
            OutputStream out = socket.getOutputStream();
            for (long sent = 0; sent < total; sent += block.length) {
                out.write(block);
            }
        } catch (IOException e) {
            // closed by the test or by the broker (overflow): done either way
        }
    }

    private static RelayStatus.OpenStream stream(BrokerHarness.RawPeerBroker raw, long id) {
        return raw.broker().status().openStreams().stream().filter(s -> s.streamId() == id).findFirst().orElse(null);
    }

    private static long bytesRead(BrokerHarness.RawPeerBroker raw, long id) {
        RelayStatus.OpenStream s = stream(raw, id);
        return s == null ? 0 : s.bytesToRouter() + s.bufferedBytes();
    }
}
