package io.continuum.broker.relay;

import java.io.IOException;
import java.time.Duration;
import java.util.List;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.api.Cidr;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.leaks.LeakCheck;
import io.continuum.broker.testing.net.LoopbackListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.testing.bus.EndToEnd;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * Every row of the subscribe check table (bus-protocol-v1.md section 5, R-SEC checks 1-6,
 * R-SEC 10): each refusal answers {@code stream_refused} with its code, counts in
 * {@code refusals_total{code}}, and dials nothing.
 */
@EndToEnd
@ExtendWith({LeakCheck.class, BrokerHarness.CloseAfterEach.class})
@LeakCheck.IgnoreThreads(BrokerHarness.ROUTER_THREADS)
class SubscribeChecksTest {
    private BrokerHarness h;

    /**
     * Starts the broker, opens stream 1 to a publisher, then subscribes stream 2 to it: the broker has no stream left
     * for it and must refuse it {@code too_many_streams}. Returns the publisher (stream 1's dial waits on it).
     */
    private LoopbackListener secondStreamIsTooManyStreams() {
        LoopbackListener publisher = h.publisher();
        RouterSession session = h.startSession();
        session.subscribe(1, NAMESPACE, "127.0.0.1", publisher.port());
        assertInstanceOf(Frame.StreamOpened.class, session.awaitAnswer(1, WAIT));
        session.subscribe(2, NAMESPACE, "127.0.0.1", publisher.port());
        assertEquals(Code.TOO_MANY_STREAMS, refused(session, 2).code());
        return publisher;
    }

    private Frame.StreamRefused refused(RouterSession session, long id) {
        return assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(id, WAIT));
    }

    @Test
    void row1DrainingRefusesEverySubscribe() {
        h = new BrokerHarness();
        LoopbackListener publisher = h.publisher();
        RouterSession session = h.startSession();
        // An open stream keeps the drain going (with none, the session would end at once).
        BrokerHarness.subscribeAndAwaitOpened(session, 1, publisher);
        session.send(new Frame.Drain("maintenance", java.util.OptionalLong.of(60_000)));
        session.subscribe(2, NAMESPACE, "127.0.0.1", publisher.port());
        assertEquals(Code.DRAINING, refused(session, 2).code());
        assertEquals(0, publisher.pendingConnections(), "nothing was dialed for the refused subscribe");
        assertEquals(1, h.metrics.get("refusals_total{code=draining}"));
    }

    @Test
    void row2AStreamIdAlreadyOpenIsADuplicate() {
        h = new BrokerHarness();
        LoopbackListener publisher = h.publisher();
        RouterSession session = h.startSession();
        session.subscribe(1, NAMESPACE, "127.0.0.1", publisher.port());
        assertInstanceOf(Frame.StreamOpened.class, session.awaitAnswer(1, WAIT));
        session.send(new Frame.Subscribe(1, new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port())));
        assertEquals(Code.DUPLICATE_STREAM, refused(session, 1).code());
        assertEquals(1, h.metrics.get("refusals_total{code=duplicate_stream}"));
    }

    @Test
    void row3OpenPlusOpeningStreamsAreBoundedByMaxStreams() {
        h = new BrokerHarness(c -> c, r -> r.sessionPolicy(hello -> hello == null ? null
                : InProcessRouter.SessionAnswer.welcome(-1, -1, 1, -1, -1)));
        secondStreamIsTooManyStreams();
    }

    @Test
    void row4AnnouncedSourcesAndInvalidTargetsAreUnsupported() {
        h = new BrokerHarness();
        RouterSession session = h.startSession();
        session.subscribe(1, new Target.AnnouncedSource("kv-listener-1"));
        session.sendRaw(FrameCodec.encodeJson(
                "{\"type\":\"subscribe\",\"stream_id\":2,\"target\":{\"kind\":\"zmq_ipc\",\"path\":\"/x\"}}"));
        session.subscribe(3, NAMESPACE, "0177.0.0.1", 5557);
        session.subscribe(4, NAMESPACE, "2130706433", 5557);
        for (long id = 1; id <= 4; id++) {
            assertEquals(Code.UNSUPPORTED_TARGET, refused(session, id).code(), "stream " + id);
        }
        assertEquals(4, h.metrics.get("refusals_total{code=unsupported_target}"));
    }

    @Test
    void rows5To7OnlyAdvertisedPublishersOfCoveredNamespacesAreDialed() throws IOException {
        h = new BrokerHarness();
        LoopbackListener publisher = h.publisher();
        RouterSession session = h.startSession();
        session.subscribe(1, "other-namespace", "127.0.0.1", publisher.port());
        session.subscribe(2, NAMESPACE, "127.0.0.1", publisher.port() == 65535 ? 1 : publisher.port() + 1);
        session.subscribe(3, "dynamo-canary", "127.0.0.1", publisher.port());
        assertEquals(Code.TARGET_NOT_ADVERTISED, refused(session, 1).code());
        assertEquals(Code.TARGET_NOT_ADVERTISED, refused(session, 2).code());
        assertEquals(Code.TARGET_NOT_ADVERTISED, refused(session, 3).code(),
                "advertised in another namespace only");
        h.view.synced(false);
        session.subscribe(4, NAMESPACE, "127.0.0.1", publisher.port());
        assertEquals(Code.TARGET_NOT_ADVERTISED, refused(session, 4).code(), "row 6: not synced");
        assertEquals(0, publisher.pendingConnections(), "nothing was dialed");
        assertEquals(4, h.metrics.get("refusals_total{code=target_not_advertised}"));
    }

    @Test
    void row9LoopbackIsNotAllowedWithoutAnAllowingCidr() {
        h = new BrokerHarness(c -> c.allowedCidrs(List.of()), r -> r);
        LoopbackListener publisher = h.publisher();
        h.view.advertise(NAMESPACE, "169.254.169.254", 80);
        h.view.advertise(NAMESPACE, "localhost", publisher.port());
        RouterSession session = h.startSession();
        session.subscribe(1, NAMESPACE, "127.0.0.1", publisher.port());
        session.subscribe(2, NAMESPACE, "169.254.169.254", 80);
        session.subscribe(3, NAMESPACE, "localhost", publisher.port());
        assertEquals(Code.TARGET_NOT_ALLOWED, refused(session, 1).code());
        assertEquals(Code.TARGET_NOT_ALLOWED, refused(session, 2).code(), "cloud metadata address");
        assertEquals(Code.TARGET_NOT_ALLOWED, refused(session, 3).code(), "a DNS name resolving to loopback");
        assertEquals(0, publisher.pendingConnections(), "nothing was dialed");
        assertEquals(3, h.metrics.get("refusals_total{code=target_not_allowed}"));
    }

    @Test
    void row9AnAddressOutsideAllowedCidrsIsNotAllowed() {
        h = new BrokerHarness(c -> c.allowedCidrs(List.of(Cidr.parse("10.244.0.0/16"))), r -> r);
        LoopbackListener publisher = h.publisher();
        RouterSession session = h.startSession();
        session.subscribe(1, NAMESPACE, "127.0.0.1", publisher.port());
        assertEquals(Code.TARGET_NOT_ALLOWED, refused(session, 1).code());
        assertEquals(0, publisher.pendingConnections());
    }

    @Test
    void row10AClosedPortIsAnUpstreamConnectFailure() throws IOException {
        h = new BrokerHarness();
        int closedPort = h.advertiseClosedPort();
        RouterSession session = h.startSession();
        session.subscribe(1, NAMESPACE, "127.0.0.1", closedPort);
        assertEquals(Code.UPSTREAM_CONNECT_FAILED, refused(session, 1).code());
        assertEquals(1, h.metrics.get("refusals_total{code=upstream_connect_failed}"));
    }

    @Test
    void row11NoFreeHttp2StreamSlotWithinTheDeadlineIsTooManyStreams() {
        RelayConfig.Timeouts s = RelayConfig.Timeouts.SPEC;
        RelayConfig.Timeouts shortSlot = new RelayConfig.Timeouts(s.dnsResolution(), s.upstreamConnectTotal(),
                Duration.ofMillis(300), s.responseHead(), s.stableSession(), s.sessionBufferBytes(),
                s.maxConcurrentDials());
        // The session stream takes one of the two slots the router allows, the first data stream the other.
        h = new BrokerHarness(c -> c.timeouts(shortSlot), r -> r.maxConcurrentStreams(2));
        LoopbackListener publisher = secondStreamIsTooManyStreams();
        publisher.awaitConnection();
        java.net.Socket second = publisher.awaitConnection();
        assertEquals(-1, readQuietly(second), "the upstream socket is closed when the slot wait expires");
    }

    private static int readQuietly(java.net.Socket s) {
        try {
            return s.getInputStream().read();
        } catch (IOException e) {
            return -1;
        }
    }
}
