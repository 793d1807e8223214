package io.continuum.broker.relay.hostile;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.relay.EventBroker;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawBusRouter.Windows;
import io.continuum.broker.testing.router.RawH2Peer;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A router that opens data streams and answers them but never reads their request bodies (R-BUF
 * 1-4): each such stream overflows and closes with {@code buffer_overflow}; together they never
 * hold more than the session budget, and every charge is returned; a stream the router does read
 * never notices the others.
 */
class UnreadStreamsTest {
    /** The clamp floor for max_stream_buffer_bytes (section 3.2). */
    private static final int SMALLEST_STREAM_BUDGET = 16_384;

    /**
     * Played by a raw HTTP/2 peer: Helidon's server stops reading the whole connection once 32 DATA
     * frames queue on one unread stream, which would stall the read stream too (a router flaw, not
     * the broker's). The peer grants the connection 1 GiB, never opens an unread stream's window
     * beyond the initial 64 KiB, and grants the read stream's window back frame by frame.
     */
    @Test
    void atTheSmallestStreamBudgetAReadStreamFlowsWhileUnreadOnesOverflow() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 50);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port())) {
            EventBroker broker = raw.broker();
            RawBusRouter session = RawBusRouter.accept(raw.peer(), WAIT, Windows.OPEN_SESSION_ONLY).sendSessionHead();
            session.sendPacked(FrameCodec.encode(new Frame.Welcome(1, "raw", OptionalLong.empty(), OptionalLong.empty(),
                    OptionalLong.empty(), OptionalLong.of(SMALLEST_STREAM_BUDGET), OptionalLong.empty())));
            int unread = 6;
            List<byte[]> subscribes = new ArrayList<>();
            for (long id = 1; id <= unread + 1; id++) {
                subscribes.add(FrameCodec.encode(new Frame.Subscribe(id,
                        new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port()))));
            }
            session.sendPacked(subscribes.toArray(byte[][]::new));
            int readStream = 0;
            List<Integer> dataStreams = new ArrayList<>();
            while (dataStreams.size() < unread + 1) {
                RawH2Peer.Frame f = session.next(WAIT);
                if (f.type() == RawH2Peer.Frame.HEADERS && f.streamId() != RawBusRouter.SESSION_STREAM) {
                    session.wire().sendStatus200(f.streamId(), false);
                    dataStreams.add(f.streamId());
                    if (session.busStreamId(f.streamId()) == 1) {
                        readStream = f.streamId();
                    }
                }
            }
            // Dials complete in any order: find stream 1's publisher socket by a byte sent through each.
            List<Socket> sockets = new ArrayList<>();
            for (int i = 0; i < unread + 1; i++) {
                sockets.add(publisher.awaitConnection());
            }
            // Each probe byte's DATA frame is taken off the connection before the next probe goes out.
            Socket healthy = null;
            ByteArrayOutputStream arrived = new ByteArrayOutputStream();
            long probed = 0;
            for (int i = 0; healthy == null && i < sockets.size(); i++) {
                sockets.get(i).getOutputStream().write(7);
                while (probed == i) {
                    RawH2Peer.Frame f = session.next(WAIT);
                    if (f.type() == RawH2Peer.Frame.DATA && dataStreams.contains(f.streamId())) {
                        probed += f.payload().length;
                        if (f.streamId() == readStream) {
                            healthy = sockets.get(i);
                            arrived.write(f.payload());
                            session.wire().sendWindowUpdate(readStream, f.payload().length);
                        }
                    }
                }
            }
            assertTrue(healthy != null, "stream 1's publisher socket found");
            for (Socket s : sockets) {
                if (s != healthy) {
                    flood(s, 64 * 1024, false);
                }
            }
            Set<Long> overflowed = new HashSet<>();
            Random random = new Random(3);
            OutputStream out = healthy.getOutputStream();
            ByteArrayOutputStream sent = new ByteArrayOutputStream();
            sent.write(7);
            // 1 MiB as 128 messages of 8,000 bytes, each read by the router before the next is written (a
            // message's charge is returned only when its write returns, so two may be charged at once).
            for (int i = 0; i < 128; i++) {
                byte[] message = new byte[8_000];
                random.nextBytes(message);
                out.write(message);
                sent.write(message);
                while (arrived.size() < sent.size()) {
                    relay(session, readStream, arrived);
                }
            }
            while (true) {
                for (Frame f : session.busFrames()) {
                    if (f instanceof Frame.StreamClosed c) {
                        assertEquals(Code.BUFFER_OVERFLOW, c.code(), "stream " + c.streamId());
                        overflowed.add(c.streamId());
                    }
                }
                if (overflowed.size() == unread) {
                    break;
                }
                relay(session, readStream, arrived);
            }
            assertTrue(!overflowed.contains(1L), "the read stream never overflowed");
            assertArrayEquals(sent.toByteArray(), arrived.toByteArray(), "every byte, in order");
            assertEquals(unread, raw.metrics().get("stream_closes_total{code=buffer_overflow}"));
            await(() -> broker.openStreams() == 1, "only the read stream is open");
            await(() -> broker.status().bufferedBytes() == 0, "every charge returned");
        }
    }

    /** Takes the next frame; DATA on the read stream is collected and its window granted back at once. */
    private static void relay(RawBusRouter session, int readStream, ByteArrayOutputStream arrived) throws Exception {
        RawH2Peer.Frame f = session.next(WAIT);
        if (f.type() == RawH2Peer.Frame.DATA && f.streamId() == readStream && f.payload().length > 0) {
            arrived.write(f.payload());
            session.wire().sendWindowUpdate(readStream, f.payload().length);
        }
    }

    @Test
    void unreadStreamsTogetherNeverHoldMoreThanTheSessionBudget() throws Exception {
        long sessionBudget = 2 * 1024 * 1024;
        try (BrokerHarness h = new BrokerHarness(c -> c.timeouts(Brokers.sessionBuffer(sessionBudget)), r -> r)) {
            LoopbackListener publisher = h.publisher();
            RouterSession session = h.startSession();
            int streams = 8; // 8 x the default 1 MiB stream budget: four times the session's
            List<Socket> flooded = new ArrayList<>();
            for (long id = 1; id <= streams; id++) {
                session.subscribe(id, NAMESPACE, "127.0.0.1", publisher.port());
                flooded.add(publisher.awaitConnection());
                assertInstanceOf(Frame.StreamOpened.class, session.awaitAnswer(id, WAIT));
                h.router.awaitDataStream(id, WAIT); // answered 200, its body never read
            }
            AtomicLong peak = new AtomicLong();
            AtomicBoolean sampling = new AtomicBoolean(true);
            Thread sampler = Thread.ofVirtual().start(() -> {
                while (sampling.get()) {
                    peak.accumulateAndGet(h.broker.status().bufferedBytes(), Math::max);
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            for (Socket s : flooded) {
                // Paced, so the queues fill over tens of milliseconds and a 1 ms sampler sees their sum.
                flood(s, 8 * 1024, true);
            }
            for (long id = 1; id <= streams; id++) {
                long streamId = id;
                assertEquals(Code.BUFFER_OVERFLOW,
                        session.await(Frame.StreamClosed.class, f -> f.streamId() == streamId, WAIT).code());
            }
            sampling.set(false);
            sampler.join(WAIT.toMillis());
            assertTrue(peak.get() <= sessionBudget, "peak " + peak.get());
            // The streams filled the session budget, not merely their own (each alone stays under 1 MiB).
            assertTrue(peak.get() > sessionBudget / 2, "peak " + peak.get());
            await(() -> h.broker.status().bufferedBytes() == 0, "every charge returned");
            assertEquals(streams, h.metrics.get("overflow_closes_total"));
            await(() -> h.broker.openStreams() == 0, "every stream gone (stream_closed leaves just before)");
            assertEquals(1, h.router.sessionAttempts(), "the session itself is fine");
        }
    }

    /** The publisher writes until the broker closes its socket, 1 ms between writes when paced. */
    private static void flood(Socket s, int writeBytes, boolean paced) {
        Thread.ofVirtual().start(() -> {
            byte[] chunk = new byte[writeBytes];
            try {
                OutputStream out = s.getOutputStream();
                while (true) {
                    out.write(chunk);
                    if (paced) {
                        Thread.sleep(1);
                    }
                }
            } catch (Exception expected) {
                // closed by the broker on overflow
            }
        });
    }
}
