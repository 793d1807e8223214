package io.continuum.broker.relay;

import java.io.IOException;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.bus.InProcessRouter.SessionAnswer;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.leaks.LeakCheck;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import io.continuum.broker.relay.api.RelayMetrics;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The timing and error hooks of {@link RelayMetrics} against a real router and real publisher sockets:
 * bus connect to welcome, subscribe to stream_opened, publisher dials by result, and every router
 * {@code error} frame by code (before welcome, non-terminal, terminal), codes this version does not know
 * folded into {@code unknown}.
 */
@ExtendWith({LeakCheck.class, BrokerHarness.CloseAfterEach.class})
@LeakCheck.IgnoreThreads(BrokerHarness.ROUTER_THREADS)
class MetricHooksTest {
    private BrokerHarness h;

    @Test
    void aWelcomedAttemptAndAnOpenedStreamReportHowLongTheyTook() {
        h = new BrokerHarness();
        LoopbackListener publisher = h.publisher();
        RouterSession session = h.startSession();
        await(h.metrics::connected, "welcomed");
        assertEquals(1, h.metrics.get("bus_connect_duration_seconds_count"));
        assertTrue(h.metrics.get("bus_connect_duration_nanos_sum") > 0);

        BrokerHarness.subscribeAndAwaitOpened(session, 3, publisher);
        // Counted before stream_opened leaves, like subscribes_total.
        assertEquals(1, h.metrics.get("subscribe_open_duration_seconds_count"));
        assertEquals(1, h.metrics.get("subscribes_total{result=opened}"));
        assertEquals(1, h.metrics.get("publisher_dial_duration_seconds_count{result=connected}"));
        assertTrue(h.metrics.get("subscribe_open_duration_nanos_sum")
                           >= h.metrics.get("publisher_dial_duration_nanos_sum{result=connected}"),
                   "the dial is part of opening the stream");
    }

    @Test
    void aDialThatFailsIsADialAndARefusalByACheckIsNot() throws IOException {
        h = new BrokerHarness();
        int closedPort = h.advertiseClosedPort();
        RouterSession session = h.startSession();
        session.subscribe(1, NAMESPACE, "127.0.0.1", closedPort);
        Frame.StreamRefused refused = assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(1, WAIT));
        assertEquals(Code.UPSTREAM_CONNECT_FAILED, refused.code());
        session.subscribe(2, NAMESPACE, "127.0.0.1", closedPort + 1 == 65536 ? 1 : closedPort + 1);
        assertEquals(Code.TARGET_NOT_ADVERTISED,
                     assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(2, WAIT)).code());
        assertEquals(1, h.metrics.get("publisher_dial_duration_seconds_count{result=failed}"));
        assertEquals(0, h.metrics.get("publisher_dial_duration_seconds_count{result=connected}"));
    }

    @Test
    void everyRouterErrorIsCountedByCodeTerminalOrNot() {
        h = new BrokerHarness();
        RouterSession session = h.startSession();
        session.send(new Frame.ErrorFrame(Code.INTERNAL_ERROR, "just so you know", false));
        session.sendRaw(FrameCodec.encodeJson(
                "{\"type\":\"error\",\"code\":\"a_code_from_the_future\",\"message\":\"?\",\"terminal\":false}"));
        session.send(new Frame.ErrorFrame(Code.SUPERSEDED, "another broker-a connected", true));
        h.router.awaitSession(WAIT);
        await(() -> h.metrics.get("session_ends_total{reason=terminal_error}") == 1, "terminal_error counted");
        assertEquals(1, h.metrics.get("router_errors_total{code=internal_error,terminal=false}"));
        assertEquals(1, h.metrics.get("router_errors_total{code=unknown,terminal=false}"));
        assertEquals(1, h.metrics.get("router_errors_total{code=superseded,terminal=true}"));
    }

    @Test
    void anErrorBeforeWelcomeIsCountedToo() {
        h = new BrokerHarness(c -> c, r -> r.sessionPolicy(hello -> hello == null ? null
                : SessionAnswer.first(new Frame.ErrorFrame(Code.UNAUTHORIZED, "no", true))));
        h.start();
        await(() -> h.metrics.get("router_errors_total{code=unauthorized}") >= 1, "unauthorized counted");
        assertEquals(0, h.metrics.get("bus_connect_duration_seconds_count"), "never welcomed");
    }
}
