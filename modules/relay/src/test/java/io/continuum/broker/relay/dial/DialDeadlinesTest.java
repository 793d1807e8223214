package io.continuum.broker.relay.dial;

import io.continuum.broker.testing.net.LoopbackListener;
import static io.continuum.broker.relay.dial.Fixtures.NS;
import static io.continuum.broker.relay.dial.Fixtures.check;
import static io.continuum.broker.relay.dial.Fixtures.dialer;
import static io.continuum.broker.relay.dial.Fixtures.target;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.continuum.broker.relay.MutableView;
import io.continuum.broker.protocol.Code;

/**
 * Stage deadlines of opening a stream (R-OPEN; bus-protocol-v1.md section 5 rows 8 and 10), the
 * order addresses are tried in, socket options, and the bound on concurrent dials. Deadlines are
 * shrunk through the constructors; a deadline that is not enforced shows up as a test that never
 * finishes within its generous wait, never as a speed assertion.
 */
class DialDeadlinesTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static InetSocketAddress at(String literal, int port) {
        return new InetSocketAddress(InetAddress.ofLiteral(literal), port);
    }

    @Test
    void rowEight_aResolverThatNeverAnswersIsRefusedAtTheDnsDeadline() throws Exception {
        TableResolver dns = new TableResolver().hang("stuck.publisher.test");
        RecordingConnector connector = new RecordingConnector();
        TargetCheck check = check(new MutableView().synced(true).advertise(NS, "stuck.publisher.test", 5557), dns,
                Duration.ofMillis(200), dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4, connector));

        DialResult outcome = BackgroundDial.start(check, target("stuck.publisher.test", 5557)).await(WAIT);

        DialResult.Refused refused = assertInstanceOf(DialResult.Refused.class, outcome);
        assertEquals(Code.UPSTREAM_CONNECT_FAILED, refused.code());
        assertEquals("DNS resolution timed out", refused.reason());
        assertTrue(dns.hangInterrupted.await(30, TimeUnit.SECONDS), "the abandoned lookup is interrupted");
        assertEquals(List.of(), connector.attempts);
    }

    @Test
    void rowEight_aNameWithoutAddressesIsUpstreamConnectFailed() throws Exception {
        TableResolver dns = new TableResolver().map("empty.publisher.test", List.of());
        TargetCheck check = check(new MutableView().synced(true).advertise(NS, "empty.publisher.test", 5557).advertise(NS,
                        "unknown.publisher.test", 5557), dns, Duration.ofSeconds(5),
                dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4, Connector.SYSTEM));

        DialResult empty = BackgroundDial.start(check, target("empty.publisher.test", 5557)).await(WAIT);
        DialResult unknown = BackgroundDial.start(check, target("unknown.publisher.test", 5557)).await(WAIT);

        assertEquals(new DialResult.Refused(Code.UPSTREAM_CONNECT_FAILED, "DNS returned no address"), empty);
        assertEquals(new DialResult.Refused(Code.UPSTREAM_CONNECT_FAILED, "DNS name did not resolve"), unknown);
    }

    @Test
    void rowEight_anIpLiteralResolvesToItselfWithoutDns() throws Exception {
        TableResolver dns = new TableResolver();
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 8)) {
            TargetCheck check = check(new MutableView().synced(true).advertise(NS, "127.0.0.1", publisher.port()), dns,
                    Duration.ofSeconds(5), dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4, Connector.SYSTEM));

            DialResult outcome = BackgroundDial.start(check, target("127.0.0.1", publisher.port())).await(WAIT);

            assertInstanceOf(DialResult.Connected.class, outcome).socket().close();
            assertEquals(0, dns.lookups(), "no lookup for a literal");
        }
    }

    @Test
    void rowTen_aClosedPortIsRefusedAsConnectionRefused() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        TargetCheck check = check(new MutableView().synced(true).advertise(NS, "127.0.0.1", closedPort), new TableResolver(),
                Duration.ofSeconds(5), dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4, Connector.SYSTEM));

        DialResult outcome = BackgroundDial.start(check, target("127.0.0.1", closedPort)).await(WAIT);

        assertEquals(new DialResult.Refused(Code.UPSTREAM_CONNECT_FAILED, "connection refused"), outcome,
                "an RST answers at once; the attempt does not wait for its timeout");
    }

    @Test
    void rowTen_aConnectThatHangsEndsAtTheAttemptTimeout() throws Exception {
        // A listener with a full accept queue drops our SYN: the connect hangs like one to a blackholed address.
        try (FullBacklogListener blackhole = new FullBacklogListener()) {
            RecordingConnector connector = new RecordingConnector();
            TargetCheck check = check(new MutableView().synced(true).advertise(NS, "127.0.0.1", blackhole.port()),
                    new TableResolver(), Duration.ofSeconds(5),
                    dialer(Duration.ofMillis(300), Duration.ofSeconds(10), 4, connector));

            DialResult outcome = BackgroundDial.start(check, target("127.0.0.1", blackhole.port())).await(WAIT);

            assertEquals(new DialResult.Refused(Code.UPSTREAM_CONNECT_FAILED, "connect timed out"), outcome);
            assertEquals(List.of(at("127.0.0.1", blackhole.port())), connector.attempts);
        }
    }

    /** A connect step that hangs until its timeout, like the kernel's, recording each timeout given. */
    private static final class HangingConnector implements Connector {
        final List<Integer> timeouts = new CopyOnWriteArrayList<>();

        @Override
        public void connect(Socket socket, InetSocketAddress remote, int timeoutMillis) throws IOException {
            timeouts.add(timeoutMillis);
            try {
                new CountDownLatch(1).await(timeoutMillis, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                throw new java.io.InterruptedIOException("interrupted");
            }
            throw new java.net.SocketTimeoutException("Connect timed out");
        }
    }

    @Test
    void rowTen_eachAttemptIsBoundedByTheAttemptTimeoutAndAllByTheBudget() throws Exception {
        TableResolver dns = new TableResolver().map("three.publisher.test", "127.0.0.1", "127.0.0.2", "127.0.0.3");
        HangingConnector connector = new HangingConnector();
        // attempt 150 ms, budget 400 ms: at most three attempts fit, the last one shortened.
        TargetCheck check = check(new MutableView().synced(true).advertise(NS, "three.publisher.test", 5557), dns,
                Duration.ofSeconds(5), dialer(Duration.ofMillis(150), Duration.ofMillis(400), 4, connector));

        DialResult outcome = BackgroundDial.start(check, target("three.publisher.test", 5557)).await(WAIT);

        DialResult.Refused refused = assertInstanceOf(DialResult.Refused.class, outcome);
        assertEquals(Code.UPSTREAM_CONNECT_FAILED, refused.code());
        assertTrue(connector.timeouts.stream().allMatch(t -> t >= 1 && t <= 150), "each attempt <= 150 ms: "
                + connector.timeouts);
        assertTrue(connector.timeouts.stream().mapToInt(Integer::intValue).sum() <= 400,
                "all attempts together within the 400 ms budget: " + connector.timeouts);
    }

    @Test
    void rowTen_theBudgetCutsTheFirstAttemptShortAndLeavesNoneForTheRest() throws Exception {
        TableResolver dns = new TableResolver().map("two.publisher.test", "127.0.0.1", "127.0.0.2");
        HangingConnector connector = new HangingConnector();
        TargetCheck check = check(new MutableView().synced(true).advertise(NS, "two.publisher.test", 5557), dns,
                Duration.ofSeconds(5), dialer(Duration.ofSeconds(5), Duration.ofMillis(300), 4, connector));

        DialResult outcome = BackgroundDial.start(check, target("two.publisher.test", 5557)).await(WAIT);

        assertEquals(Code.UPSTREAM_CONNECT_FAILED, assertInstanceOf(DialResult.Refused.class, outcome).code());
        assertEquals(1, connector.timeouts.size(), "the budget was spent on the first address");
        assertTrue(connector.timeouts.getFirst() <= 300, "first attempt capped by the budget, not the 5 s timeout");
    }

    @Test
    void rowTen_whenTheFirstAddressRefusesTheSecondIsDialed() throws Exception {
        // Listening on 127.0.0.1 only: the same port on 127.0.0.2 answers RST.
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 8, InetAddress.ofLiteral("127.0.0.1"))) {
            int port = publisher.port();
            TableResolver dns = new TableResolver().map("two.publisher.test", "127.0.0.2", "127.0.0.1");
            RecordingConnector connector = new RecordingConnector();
            TargetCheck check = check(new MutableView().synced(true).advertise(NS, "two.publisher.test", port), dns,
                    Duration.ofSeconds(5), dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4, connector));

            DialResult outcome = BackgroundDial.start(check, target("two.publisher.test", port)).await(WAIT);

            DialResult.Connected connected = assertInstanceOf(DialResult.Connected.class, outcome);
            try (Socket socket = connected.socket(); Socket accepted = publisher.awaitConnection()) {
                assertEquals(at("127.0.0.1", port), connected.remote());
                assertEquals(List.of(at("127.0.0.2", port), at("127.0.0.1", port)), connector.attempts,
                        "resolver order, refused address first");
                assertEquals(socket.getLocalPort(), accepted.getPort());
            }
        }
    }

    @Test
    void publisherSocketsGetNoDelayKeepaliveWithShortTimersAndTheReceiveBuffer() throws Exception {
        SocketSettings settings = new SocketSettings(Duration.ofSeconds(7), Duration.ofSeconds(3), 4, 256 * 1024);
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 8)) {
            UpstreamDialer dialer = new UpstreamDialer(Fixtures.LOOPBACK_ALLOWED, Duration.ofSeconds(5),
                    Duration.ofSeconds(10), 4, settings, Connector.SYSTEM);
            TargetCheck check = check(new MutableView().synced(true).advertise(NS, "127.0.0.1", publisher.port()),
                    new TableResolver(), Duration.ofSeconds(5), dialer);

            DialResult outcome = BackgroundDial.start(check, target("127.0.0.1", publisher.port())).await(WAIT);

            try (Socket socket = assertInstanceOf(DialResult.Connected.class, outcome).socket()) {
                assertTrue(socket.getTcpNoDelay(), "TCP_NODELAY");
                assertTrue(socket.getKeepAlive(), "SO_KEEPALIVE");
                assertEquals(7, SocketSettings.intOption(socket, "TCP_KEEPIDLE"));
                assertEquals(3, SocketSettings.intOption(socket, "TCP_KEEPINTERVAL"));
                assertEquals(4, SocketSettings.intOption(socket, "TCP_KEEPCOUNT"));
                assertTrue(socket.getReceiveBufferSize() >= 128 * 1024,
                        "SO_RCVBUF requested before connect: " + socket.getReceiveBufferSize());
            }
        }
    }

    /**
     * A TCP connect to a loopback port nothing listens on can connect the socket to itself when the kernel
     * gives it that very port as its source port (a simultaneous open with itself): seen once in CI, where
     * a subscribe to a publisher that was down was answered stream_opened. The connector here makes it
     * certain by binding the socket to the target's port first. Such a socket reaches no publisher: the
     * dial fails as a refused connect would, and the socket is closed.
     */
    @Test
    void aConnectThatReachesItselfIsAFailedDialNotAPublisher() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        List<Socket> dialed = new CopyOnWriteArrayList<>();
        Connector selfConnecting = (socket, remote, timeoutMillis) -> {
            dialed.add(socket);
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(remote.getAddress(), remote.getPort()));
            socket.connect(remote, timeoutMillis);
        };
        TargetCheck check = check(new MutableView().synced(true).advertise(NS, "127.0.0.1", port), new TableResolver(),
                Duration.ofSeconds(5), Fixtures.dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4, selfConnecting));

        DialResult outcome = BackgroundDial.start(check, target("127.0.0.1", port)).await(WAIT);

        DialResult.Refused refused = assertInstanceOf(DialResult.Refused.class, outcome);
        assertEquals(Code.UPSTREAM_CONNECT_FAILED, refused.code());
        assertEquals("connected to itself (nothing listens on the port)", refused.reason());
        assertEquals(1, dialed.size());
        assertTrue(dialed.getFirst().isClosed(), "the self-connected socket is closed");
    }

    /** The first connect waits at a gate (a connect in progress); later ones go through. */
    private static final class GateConnector implements Connector {
        final CountDownLatch firstEntered = new CountDownLatch(1);
        final CountDownLatch gate = new CountDownLatch(1);
        final List<Integer> timeouts = new CopyOnWriteArrayList<>();

        @Override
        public void connect(Socket socket, InetSocketAddress remote, int timeoutMillis) throws IOException {
            timeouts.add(timeoutMillis);
            if (firstEntered.getCount() == 1) {
                firstEntered.countDown();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException("interrupted");
                }
            }
            Connector.SYSTEM.connect(socket, remote, timeoutMillis);
        }
    }

    /**
     * A loopback publisher, a dialer with one dial permit and connect budget {@code connectBudget} whose first connect
     * waits at the {@link GateConnector}'s gate, and that first dial started and seen at the gate (holding the permit).
     */
    private record FirstDialHeld(LoopbackListener publisher, GateConnector connector, UpstreamDialer dialer,
                                 TargetCheck check, BackgroundDial first) implements AutoCloseable {
        static FirstDialHeld start(Duration connectBudget) throws Exception {
            LoopbackListener publisher = LoopbackListener.open("publisher", 8);
            try {
                int port = publisher.port();
                GateConnector connector = new GateConnector();
                UpstreamDialer dialer = Fixtures.dialer(Duration.ofSeconds(5), connectBudget, 1, connector);
                TargetCheck check = Fixtures.check(new MutableView().synced(true).advertise(NS, "127.0.0.1", port),
                        new TableResolver(), Duration.ofSeconds(5), dialer);
                BackgroundDial first = BackgroundDial.start(check, target("127.0.0.1", port));
                assertTrue(connector.firstEntered.await(30, TimeUnit.SECONDS));
                return new FirstDialHeld(publisher, connector, dialer, check, first);
            } catch (Exception | AssertionError e) {
                publisher.close();
                throw e;
            }
        }

        /** Another dial of the same publisher through the same check. */
        BackgroundDial dialAgain() {
            return BackgroundDial.start(check, target("127.0.0.1", publisher.port()));
        }

        @Override
        public void close() throws IOException {
            publisher.close();
        }
    }

    private static void awaitQueued(UpstreamDialer dialer, int n) {
        long giveUp = System.nanoTime() + WAIT.toNanos();
        while (dialer.queuedDials() < n) {
            if (System.nanoTime() > giveUp) {
                throw new AssertionError("no dial queued");
            }
            Thread.onSpinWait();
        }
    }

    @Test
    void aDialWaitingForAPermitKeepsTheDeadlineOfItsSubscribe() throws Exception {
        try (FirstDialHeld held = FirstDialHeld.start(Duration.ofSeconds(3))) {
            GateConnector connector = held.connector();
            UpstreamDialer dialer = held.dialer();
            BackgroundDial first = held.first();
            BackgroundDial second = held.dialAgain();
            awaitQueued(dialer, 1);
            // From here on the second dial is in its connect stage, waiting for the permit: hold it a while.
            long queuedAt = System.nanoTime();
            assertEquals(1, connector.timeouts.size(), "the second dial waits: one dial permit per session here");
            Thread.sleep(100);
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - queuedAt);
            connector.gate.countDown();

            DialResult firstOutcome = first.await(WAIT);
            DialResult secondOutcome = second.await(WAIT);

            assertInstanceOf(DialResult.Connected.class, firstOutcome).socket().close();
            assertInstanceOf(DialResult.Connected.class, secondOutcome).socket().close();
            // The connect stage starts when DNS ends (at once for a literal), a hair after secondStarted; the
            // connector's timeout is that remainder rounded up to whole milliseconds: hence the 1 ms.
            assertTrue(connector.timeouts.get(1) <= 3000 - waitedMillis + 1,
                    "the queued dial's attempt timeout is what is left of the budget counted from its connect stage: "
                            + connector.timeouts.get(1) + " ms after waiting " + waitedMillis + " ms");
            assertEquals(1, dialer.freeDialPermits(), "permits are returned after connecting");
        }
    }

    @Test
    void aDialThatGetsNoPermitWithinTheBudgetIsUpstreamConnectFailed() throws Exception {
        try (FirstDialHeld held = FirstDialHeld.start(Duration.ofMillis(300))) {
            GateConnector connector = held.connector();
            BackgroundDial first = held.first();
            DialResult second = held.dialAgain().await(WAIT);

            assertEquals(new DialResult.Refused(Code.UPSTREAM_CONNECT_FAILED, "no dial slot within the connect budget"),
                    second);
            assertEquals(1, connector.timeouts.size(), "the second never reached the connect step");
            first.cancel();
            connector.gate.countDown();
        }
    }
}
