package io.continuum.broker.relay;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.continuum.broker.h2.Http2;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.api.RelayStatus;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.router.RawBusRouter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A router whose HTTP/2 layer stays healthy (it answers PINGs, keeps the connection window open, sends heartbeats)
 * but never replenishes the session stream's window: every session frame the broker writes once the 65,535 bytes
 * are spent waits. None of that may wedge the broker (bus-protocol-v1.md sections 2 and 4; docs/protocol.md 8a).
 * The stall is made the way a router would cause it: {@code subscribe}s for a publisher nobody advertises, each
 * refused {@code target_not_advertised} from its stream's own thread, while the broker's reader keeps reading.
 */
@ExtendWith(LeakCheck.class)
class RouterStopsReadingTest {
    /** 800 refusals of about 100 bytes: more than the session stream's window holds. */
    private static final int FLOOD = 800;

    /** R-BEH 8, section 4 item 6: SIGTERM's drain ends by its deadline, whether or not {@code draining} was written. */
    @Test
    void aShutdownEndsByItsDeadlineWhenDrainingCannotBeWritten() throws Exception {
        try (BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.start(c -> c);
             RawBusRouter router = RawBusRouter.acceptSession(raw.peer(), WAIT, welcome(60_000, 20_000, 1_024),
                     RawBusRouter.Windows.GRANT_AS_READ_BUT_SESSION)) {
            await(raw.metrics()::connected, "welcomed");
            stall(router, raw.metrics());

            CountDownLatch shutDown = new CountDownLatch(1);
            Thread.ofVirtual().start(() -> {
                try {
                    raw.broker().shutdown(Duration.ofMillis(500));
                    shutDown.countDown();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(shutDown.await(WAIT.toMillis(), TimeUnit.MILLISECONDS),
                    "the shutdown returned by its deadline, although draining could not be written");
            assertEquals(1, raw.metrics().get("session_ends_total{reason=shutdown}"));
        }
    }

    /**
     * Section 4 item 2, as docs/protocol.md 8a reads it: a router that takes no session frame for the idle timeout
     * is gone, however alive its heartbeats say it is. The session ends {@code idle_timeout} and the broker
     * reconnects.
     */
    @Test
    void aSessionStreamThatTakesNothingForTheIdleTimeoutEndsTheSession() throws Exception {
        try (BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.start(c -> c);
             RawBusRouter router = RawBusRouter.acceptSession(raw.peer(), WAIT, welcome(1_000, 200, 1_024),
                     RawBusRouter.Windows.GRANT_AS_READ_BUT_SESSION);
             Heartbeats alive = new Heartbeats(router)) {
            await(raw.metrics()::connected, "welcomed");
            // The stall ends the session a second after it begins, maybe while the flood is still being sent.
            Thread flood = flood(router, FLOOD);

            raw.peer().accept(WAIT).close(); // the reconnect: only once the stalled session has ended
            flood.join();
            assertEquals(1, raw.metrics().get("session_ends_total{reason=idle_timeout}"));
            assertTrue(firstEnd(raw).detail().contains("took no session frame for"), firstEnd(raw).detail());
        }
    }

    /**
     * Answers waiting for a stalled session stream are bounded: with {@code max_streams} 1,024, at most 1,024 + 1,024
     * frames wait; one more ends the session ({@code idle_timeout}) instead of parking one more thread and frame. The
     * idle timeout is a minute, so nothing else ends it within the test. The end's detail counts the frames waiting
     * when it was decided: the bound, plus at most the few that the broker's carrier threads were adding at that
     * instant.
     */
    @Test
    void answersWaitingForAStalledSessionAreBoundedInNumber() throws Exception {
        try (BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.start(c -> c);
             RawBusRouter router = RawBusRouter.acceptSession(raw.peer(), WAIT, welcome(60_000, 20_000, 1_024),
                     RawBusRouter.Windows.GRANT_AS_READ_BUT_SESSION)) {
            await(raw.metrics()::connected, "welcomed");
            Thread flood = flood(router, 5_000);

            raw.peer().accept(WAIT).close(); // the reconnect: only once the bound ended the session
            flood.join();
            assertEquals(1, raw.metrics().get("session_ends_total{reason=idle_timeout}"));
            String detail = firstEnd(raw).detail();
            Matcher waiting = Pattern.compile("while (\\d+) frames").matcher(detail);
            assertTrue(waiting.find(), detail);
            int frames = Integer.parseInt(waiting.group(1));
            assertTrue(frames > 2_048 && frames <= 2_048 + 64, "the frame past 1,024 + 1,024 ended it: " + detail);
        }
    }

    /**
     * Rows 1-3 of section 5 ({@code draining}, {@code duplicate_stream}, {@code too_many_streams}) are decided by the
     * session's reader; their answers must not make it wait for a stalled session stream, or it stops reading: the
     * router's frames pile up unread and only the idle timeout ends the session. Here {@code max_streams} is 1 and
     * one stream is open, so every further subscribe is refused {@code too_many_streams} by the reader; the refusals
     * fill the session stream's window and more wait, until the bound on waiting frames (1 + 1,024) ends the session
     * and the broker reconnects. A reader that waited would stop after about 600 of them.
     */
    @Test
    void refusalsDecidedByTheReaderNeverStopItReading() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 50);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port());
             RawBusRouter router = RawBusRouter.acceptSession(raw.peer(), WAIT, welcome(60_000, 20_000, 1),
                     RawBusRouter.Windows.GRANT_AS_READ_BUT_SESSION)) {
            await(raw.metrics()::connected, "welcomed");
            router.subscribe(1, NAMESPACE, "127.0.0.1", publisher.port());
            try (Socket upstream = publisher.awaitConnection()) {
                router.await(Frame.StreamOpened.class, f -> f.streamId() == 1, WAIT);
                Thread flood = flood(router, 2, 3_000,
                        new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port()));

                raw.peer().accept(WAIT).close(); // the reconnect: only once the bound ended the session
                flood.join();
                assertEquals(1, raw.metrics().get("session_ends_total{reason=idle_timeout}"));
                String detail = firstEnd(raw).detail();
                assertTrue(detail.contains("took no session frame while"), detail);
            }
        }
    }

    /**
     * R-MET: {@code refusals_total} counts the {@code stream_refused} frames written. The stall leaves refusals
     * waiting behind a write that cannot finish; a shutdown drops them with the session: they are not counted, while
     * {@code subscribes_total{result=refused}} counts every refused subscribe.
     */
    @Test
    void refusalsDroppedWithTheirSessionAreNotCounted() throws Exception {
        try (BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.start(c -> c);
             RawBusRouter router = RawBusRouter.acceptSession(raw.peer(), WAIT, welcome(60_000, 20_000, 1_024),
                     RawBusRouter.Windows.GRANT_AS_READ_BUT_SESSION)) {
            await(raw.metrics()::connected, "welcomed");
            stall(router, raw.metrics());
            raw.broker().shutdown(Duration.ofMillis(200));

            long counted = raw.metrics().get("refusals_total{code=target_not_advertised}");
            assertEquals(FLOOD, raw.metrics().get("subscribes_total{result=refused}"));
            // the frame whose write the shut window stopped halfway is counted: it went out in part
            await(() -> router.busFrames().stream().filter(f -> f instanceof Frame.StreamRefused).count()
                    >= counted - 1, "only the refusals the router was sent are counted (" + counted + ")");
            assertTrue(counted < FLOOD, "the refusals left waiting were not counted: " + counted);
        }
    }

    /**
     * R-MET: {@code stream_closes_total} counts exactly the {@code stream_closed} frames sent. A publisher ends while
     * the session stream is stalled; its {@code stream_closed upstream_closed} waits for the writer, the session ends
     * (a shutdown) before it can be written, and it is dropped: not counted.
     */
    @Test
    void aStreamClosedDroppedWithItsSessionIsNotCounted() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 50);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port());
             RawBusRouter router = RawBusRouter.acceptSession(raw.peer(), WAIT, welcome(60_000, 20_000, 1_024),
                     RawBusRouter.Windows.GRANT_AS_READ_BUT_SESSION)) {
            await(raw.metrics()::connected, "welcomed");
            router.subscribe(FLOOD + 1, NAMESPACE, "127.0.0.1", publisher.port());
            try (Socket upstream = publisher.awaitConnection()) {
                router.await(Frame.StreamOpened.class, f -> f.streamId() == FLOOD + 1, WAIT);
                stall(router, raw.metrics());

                upstream.close(); // EOF: the stream ends upstream_closed, its answer waits behind the stalled writer
                await(() -> raw.broker().status().openStreams().isEmpty(), "the stream left the table");
                raw.broker().shutdown(Duration.ofMillis(200));

                assertEquals(0, raw.metrics().get("stream_closes_total{code=upstream_closed}"),
                        "the stream_closed that was never written is not counted");
                assertTrue(router.busFrames().stream().noneMatch(f -> f instanceof Frame.StreamClosed));
            }
        }
    }

    /**
     * Section 2: with SETTINGS_INITIAL_WINDOW_SIZE 0 and a 200 head, {@code hello} can never be written; the attempt
     * fails {@code connect_failed} within {@code bus_connect_timeout} instead of waiting in AWAITING_WELCOME.
     */
    @Test
    void aHelloThatCannotBeWrittenFailsTheAttempt() throws Exception {
        try (BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.start(Map.of(Http2.SETTINGS_INITIAL_WINDOW_SIZE, 0L),
                c -> c.busConnectTimeout(Duration.ofSeconds(1)));
             RawBusRouter router = RawBusRouter.accept(raw.peer(), WAIT,
                     RawBusRouter.Windows.GRANT_AS_READ_BUT_SESSION)) {
            router.sendSessionHead();

            raw.peer().accept(WAIT).close(); // the next attempt
            RelayStatus.SessionEnd first = firstEnd(raw);
            assertEquals(EndReason.CONNECT_FAILED, first.reason());
            assertTrue(first.detail().contains("hello not written within"), first.detail());
        }
    }

    /**
     * Spends the session stream's window: {@link #FLOOD} refusals, written by the streams' threads; the router reads
     * those that fit. Returns once every refusal has reached the broker's writer (each is counted before it is
     * written) and the router holds fewer than all of them: the rest wait, behind a write that cannot finish.
     */
    private static void stall(RawBusRouter router, CountingMetrics metrics) throws Exception {
        for (long id = 1; id <= FLOOD; id++) {
            router.sendWithinWindow(unadvertised(id), WAIT);
        }
        await(() -> metrics.get("subscribes_total{result=refused}") == FLOOD, "every subscribe refused");
        long got = router.busFrames().stream().filter(f -> f instanceof Frame.StreamRefused).count();
        assertTrue(got < FLOOD, "the session stream's window holds fewer than " + FLOOD + " refusals: " + got);
    }

    /**
     * Sends {@code count} subscribes for an unadvertised publisher within the broker's windows, on a thread of its
     * own, until done or the session ends under it (the broker then closes the connection and grants no more).
     */
    private static Thread flood(RawBusRouter router, int count) {
        return flood(router, 1, count, UNADVERTISED);
    }

    /** As {@link #flood(RawBusRouter, int)}, for stream ids {@code first} to {@code last}, all to {@code target}. */
    private static Thread flood(RawBusRouter router, long first, long last, Target target) {
        return Thread.ofVirtual().name("router-flood").start(() -> {
            try {
                for (long id = first; id <= last; id++) {
                    router.sendWithinWindow(new Frame.Subscribe(id, target), WAIT);
                }
            } catch (Exception e) {
                // the session ended under the flood
            }
        });
    }

    /** A publisher nobody advertises. */
    private static final Target UNADVERTISED = new Target.ZmqTcp(NAMESPACE, "127.0.0.1", 9);

    private static Frame.Subscribe unadvertised(long id) {
        return new Frame.Subscribe(id, UNADVERTISED);
    }

    private static Frame.Welcome welcome(long idleMs, long heartbeatMs, long maxStreams) {
        return new Frame.Welcome(1, "stalled", OptionalLong.of(heartbeatMs), OptionalLong.of(idleMs),
                OptionalLong.of(maxStreams), OptionalLong.empty(), OptionalLong.empty());
    }

    /** The end of the stalled session: the first of the broker's recent ends (oldest first). */
    private static RelayStatus.SessionEnd firstEnd(BrokerHarness.RawPeerBroker raw) {
        return raw.broker().status().recentEnds().get(0);
    }

    /** A router that is alive: a heartbeat every 100 ms on its own thread, until closed or its connection is. */
    private static final class Heartbeats implements AutoCloseable {
        private final Thread thread;

        Heartbeats(RawBusRouter router) {
            thread = Thread.ofVirtual().name("router-heartbeats").start(() -> {
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        router.send(Frame.Heartbeat.INSTANCE);
                        Thread.sleep(100); // the router's own heartbeat interval, not a wait for the broker
                    }
                } catch (InterruptedException e) {
                    // closed
                } catch (Exception e) {
                    // the broker ended the session: its connection is gone
                }
            });
        }

        @Override
        public void close() throws InterruptedException {
            thread.interrupt();
            thread.join();
        }
    }
}
