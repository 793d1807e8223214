package io.continuum.broker.relay.hostile;

import java.io.IOException;
import java.net.Socket;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.relay.EventBroker;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.router.RawBusRouter.Windows;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A router that resets every data stream the moment its HEADERS arrive, hundreds in a row
 * (bus-protocol-v1.md section 6: "router resets the data stream: the client closes the publisher
 * socket and reports nothing"). Played by a raw HTTP/2 peer: Helidon's server resets through its
 * internals and sometimes escalates to GOAWAY, which would end the session for reasons of its own.
 */
class RstStormTest {
    private static final int CANCEL = ErrorCode.CANCEL.code();

    @Test
    void everyResetStreamClosesItsPublisherSocketSilentlyAndTheSessionCarriesOn() throws Exception {
        int storm = 300;
        try (LoopbackListener publisher = LoopbackListener.open("publisher", storm);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port())) {
            EventBroker broker = raw.broker();
            RawBusRouter session = RawBusRouter.accept(raw.peer(), WAIT, Windows.OPEN_SESSION_ONLY).sendSessionHead();
            session.sendPacked(FrameCodec.encode(RawBusRouter.welcome("raw")));
            byte[][] subscribes = new byte[storm][];
            for (int i = 0; i < storm; i++) {
                subscribes[i] = FrameCodec.encode(new Frame.Subscribe(i + 1,
                        new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port())));
            }
            session.sendPacked(subscribes);
            Set<Integer> reset = new HashSet<>();
            while (reset.size() < storm || opened(session.busFrames()) < storm) {
                RawH2Peer.Frame f = session.next(WAIT);
                if (f.type() == RawH2Peer.Frame.HEADERS && f.streamId() != RawBusRouter.SESSION_STREAM) {
                    session.wire().sendReset(f.streamId(), CANCEL);
                    reset.add(f.streamId());
                }
            }
            for (int i = 0; i < storm; i++) {
                Socket upstream = publisher.awaitConnection();
                assertEquals(-1, readQuietly(upstream), "publisher socket " + i + " closed");
                upstream.close();
            }
            await(() -> broker.openStreams() == 0, "every reset stream gone");
            assertEquals(storm, raw.metrics().get("subscribes_total{result=opened}"));
            assertTrue(raw.metrics().connected(), "the session carries on");

            // A stream the router keeps works as ever, and nothing was reported for the reset ones.
            session.sendPacked(FrameCodec.encode(new Frame.Subscribe(storm + 1,
                    new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port()))));
            int kept = session.answerNextDataStream(WAIT);
            Socket upstream = publisher.awaitConnection();
            upstream.getOutputStream().write(new byte[] {1, 2, 3});
            byte[] got = new byte[0];
            while (got.length < 3) {
                RawH2Peer.Frame f = session.next(WAIT);
                if (f.type() == RawH2Peer.Frame.DATA && f.streamId() == kept) {
                    byte[] more = new byte[got.length + f.payload().length];
                    System.arraycopy(got, 0, more, 0, got.length);
                    System.arraycopy(f.payload(), 0, more, got.length, f.payload().length);
                    got = more;
                }
            }
            assertArrayEquals(new byte[] {1, 2, 3}, got);
            assertTrue(session.busFrames().stream().noneMatch(f -> f instanceof Frame.StreamClosed
                    || f instanceof Frame.StreamRefused), "reset streams are closed silently");
            assertEquals(0, raw.metrics().get("session_ends_total{reason=connection_lost}")
                    + raw.metrics().get("session_ends_total{reason=router_closed}")
                    + raw.metrics().get("session_ends_total{reason=protocol_error}"));
            assertEquals(1, broker.openStreams());
        }
    }

    private static long opened(List<Frame> frames) {
        return frames.stream().filter(f -> f instanceof Frame.StreamOpened).count();
    }

    private static int readQuietly(Socket s) {
        try {
            return s.getInputStream().read();
        } catch (IOException e) {
            return -1;
        }
    }
}
