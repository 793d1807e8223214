package io.continuum.broker.relay.dial;

import io.continuum.broker.testing.net.LoopbackListener;
import static io.continuum.broker.relay.dial.Fixtures.NS;
import static io.continuum.broker.relay.dial.Fixtures.check;
import static io.continuum.broker.relay.dial.Fixtures.dialer;
import static io.continuum.broker.relay.dial.Fixtures.target;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.continuum.broker.relay.MutableView;

import org.junit.jupiter.api.Test;

/**
 * Cancelling a subscribe that is still opening ({@code unsubscribe} or session end; bus-protocol
 * section 5: "unless an unsubscribe for it arrives first (then it aborts silently)"; R-OPEN: "close
 * the upstream socket"): it stops promptly in every stage and leaves no socket open.
 */
class CancellationTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void cancelDuringDnsInterruptsTheLookupAndDialsNothing() throws Exception {
        TableResolver dns = new TableResolver().hang("stuck.publisher.test");
        RecordingConnector connector = new RecordingConnector();
        TargetCheck check = check(new MutableView().synced(true).advertise(NS, "stuck.publisher.test", 5557), dns,
                Duration.ofSeconds(60), dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4, connector));

        BackgroundDial attempt = BackgroundDial.start(check, target("stuck.publisher.test", 5557));
        assertTrue(dns.hangStarted.await(30, TimeUnit.SECONDS));
        assertTrue(attempt.cancel());

        assertSame(DialResult.Cancelled.INSTANCE, attempt.await(WAIT));
        assertTrue(attempt.isCancelled());
        assertTrue(dns.hangInterrupted.await(30, TimeUnit.SECONDS), "the lookup is interrupted, not waited for");
        assertFalse(attempt.cancel(), "cancel is idempotent");
        assertEquals(List.of(), connector.attempts);
    }

    /** The real connect step, publishing the socket it connects and signalling entry and return. */
    private static final class WatchedConnector implements Connector {
        final AtomicReference<Socket> socket = new AtomicReference<>();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch returned = new CountDownLatch(1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        @Override
        public void connect(Socket s, InetSocketAddress remote, int timeoutMillis) throws IOException {
            socket.set(s);
            entered.countDown();
            try {
                Connector.SYSTEM.connect(s, remote, timeoutMillis);
            } catch (IOException | RuntimeException e) {
                failure.set(e);
                throw e;
            } finally {
                returned.countDown();
            }
        }
    }

    @Test
    void cancelDuringAHangingConnectClosesTheSocketAndEndsTheConnect() throws Exception {
        try (FullBacklogListener blackhole = new FullBacklogListener()) {
            WatchedConnector connector = new WatchedConnector();
            TargetCheck check = check(new MutableView().synced(true).advertise(NS, "127.0.0.1", blackhole.port()),
                    new TableResolver(), Duration.ofSeconds(5),
                    dialer(Duration.ofSeconds(120), Duration.ofSeconds(120), 4, connector));

            BackgroundDial attempt = BackgroundDial.start(check, target("127.0.0.1", blackhole.port()));
            assertTrue(connector.entered.await(30, TimeUnit.SECONDS));
            assertTrue(attempt.cancel());

            assertSame(DialResult.Cancelled.INSTANCE, attempt.await(WAIT));
            assertTrue(connector.returned.await(30, TimeUnit.SECONDS),
                    "the connect ends long before its 120 s timeout");
            assertTrue(connector.socket.get().isClosed(), "the socket is closed");
            assertInstanceOf(IOException.class, connector.failure.get());
        }
    }

    @Test
    void cancelWhileWaitingForADialPermitLeavesThePermitsIntact() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 8)) {
            int port = publisher.port();
            CountDownLatch gate = new CountDownLatch(1);
            CountDownLatch firstEntered = new CountDownLatch(1);
            Connector gated = (s, remote, timeout) -> {
                firstEntered.countDown();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException();
                }
                Connector.SYSTEM.connect(s, remote, timeout);
            };
            UpstreamDialer dialer = dialer(Duration.ofSeconds(5), Duration.ofSeconds(60), 1, gated);
            TargetCheck check = check(new MutableView().synced(true).advertise(NS, "127.0.0.1", port), new TableResolver(),
                    Duration.ofSeconds(5), dialer);

            BackgroundDial first = BackgroundDial.start(check, target("127.0.0.1", port));
            assertTrue(firstEntered.await(30, TimeUnit.SECONDS));
            BackgroundDial queued = BackgroundDial.start(check, target("127.0.0.1", port));
            long giveUp = System.nanoTime() + WAIT.toNanos();
            while (dialer.queuedDials() < 1 && System.nanoTime() < giveUp) {
                Thread.onSpinWait();
            }
            assertTrue(queued.cancel());
            assertSame(DialResult.Cancelled.INSTANCE, queued.await(WAIT));
            gate.countDown();

            assertInstanceOf(DialResult.Connected.class, first.await(WAIT)).socket().close();
            long giveUpPermits = System.nanoTime() + WAIT.toNanos();
            while (dialer.freeDialPermits() != 1 && System.nanoTime() < giveUpPermits) {
                Thread.onSpinWait();
            }
            assertEquals(1, dialer.freeDialPermits(), "the cancelled dial took no permit");
        }
    }

    @Test
    void aConnectionThatLosesTheRaceAgainstCancelIsClosedNotDelivered() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 8)) {
            int port = publisher.port();
            CompletableFuture<BackgroundDial> self = new CompletableFuture<>();
            AtomicReference<Socket> connected = new AtomicReference<>();
            // The unsubscribe arrives the instant the TCP handshake completes.
            Connector cancelsRightAfterConnecting = (s, remote, timeout) -> {
                Connector.SYSTEM.connect(s, remote, timeout);
                connected.set(s);
                self.join().cancel();
            };
            TargetCheck check = check(new MutableView().synced(true).advertise(NS, "127.0.0.1", port), new TableResolver(),
                    Duration.ofSeconds(5), dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4,
                            cancelsRightAfterConnecting));

            BackgroundDial attempt = BackgroundDial.start(check, target("127.0.0.1", port));
            self.complete(attempt);

            assertSame(DialResult.Cancelled.INSTANCE, attempt.await(WAIT));
            try (Socket accepted = publisher.awaitConnection()) {
                assertEquals(-1, accepted.getInputStream().read(), "the publisher sees the connection closed");
            }
            assertTrue(connected.get().isClosed());
        }
    }

    @Test
    void cancelAfterConnectedLeavesTheSocketToItsOwner() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 8)) {
            int port = publisher.port();
            TargetCheck check = check(new MutableView().synced(true).advertise(NS, "127.0.0.1", port), new TableResolver(),
                    Duration.ofSeconds(5), dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4, Connector.SYSTEM));

            BackgroundDial attempt = BackgroundDial.start(check, target("127.0.0.1", port));
            DialResult.Connected c = assertInstanceOf(DialResult.Connected.class, attempt.await(WAIT));

            assertFalse(attempt.cancel(), "too late: the outcome was delivered");
            try (Socket socket = c.socket()) {
                assertFalse(socket.isClosed());
            }
        }
    }

    @Test
    void interruptingCheckAndConnectCancels() throws Exception {
        TableResolver dns = new TableResolver().hang("stuck.publisher.test");
        TargetCheck check = check(new MutableView().synced(true).advertise(NS, "stuck.publisher.test", 5557), dns,
                Duration.ofSeconds(60), dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4, Connector.SYSTEM));
        CompletableFuture<DialResult> outcome = new CompletableFuture<>();
        Thread caller = Thread.ofVirtual().start(
                () -> outcome.complete(check.checkAndConnect(DialTarget.of(target("stuck.publisher.test", 5557)))));

        assertTrue(dns.hangStarted.await(30, TimeUnit.SECONDS));
        caller.interrupt();

        assertSame(DialResult.Cancelled.INSTANCE, outcome.get(30, TimeUnit.SECONDS));
        assertTrue(dns.hangInterrupted.await(30, TimeUnit.SECONDS));
    }
}
