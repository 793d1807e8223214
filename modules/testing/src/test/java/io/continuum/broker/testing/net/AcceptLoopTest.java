package io.continuum.broker.testing.net;

import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The contract every "publisher down" and "router down" test stands on: once {@code close()} returns, the
 * port refuses connections. The JDK closes a listener whose {@code accept()} is parked on a virtual thread
 * only when that thread next runs, so the test holds every carrier thread busy while closing: the state of
 * a loaded machine, where a flapping-publisher test saw a "down" publisher accept the broker's dial.
 */
class AcceptLoopTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Test
    void acceptedConnectionsReachTheHandler() throws Exception {
        LinkedBlockingQueue<Socket> accepted = new LinkedBlockingQueue<>();
        try (AcceptLoop loop = AcceptLoop.start("accept-test", new ServerSocket(0, 50, LOOPBACK), accepted::add);
                Socket client = new Socket(LOOPBACK, loop.port())) {
            Socket server = accepted.poll(20, TimeUnit.SECONDS);
            assertNotNull(server, "the handler got the connection");
            server.close();
        }
    }

    @Test
    void afterCloseReturnsThePortRefusesEvenWhileEveryCarrierThreadIsBusy() throws Exception {
        AcceptLoop loop = AcceptLoop.start("accept-test", new ServerSocket(0, 50, LOOPBACK), Socket::close);
        int port = loop.port();
        await(loop::parked, "the accepting thread is parked in accept()");

        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
                Runtime.getRuntime().availableProcessors());
        AtomicBoolean release = new AtomicBoolean();
        CountDownLatch allBusy = new CountDownLatch(carriers);
        List<Thread> spinners = new ArrayList<>();
        Thread closer = null;
        try {
            for (int i = 0; i < carriers; i++) {
                spinners.add(Thread.ofVirtual().start(() -> {
                    allBusy.countDown();
                    while (!release.get()) {
                        Thread.onSpinWait();
                    }
                }));
            }
            allBusy.await();
            closer = Thread.ofPlatform().name("accept-loop-closer").start(loop::close);
            Thread closing = closer;
            await(() -> closing.getState() == Thread.State.TERMINATED || closing.getState() == Thread.State.WAITING,
                    "close() either returned or waits for the accepting thread");
            if (closing.getState() == Thread.State.TERMINATED) {
                assertRefused(port, "close() returned while no carrier thread was free");
            }
        } finally {
            release.set(true);
            for (Thread spinner : spinners) {
                spinner.join();
            }
            if (closer != null) {
                closer.join();
            }
        }
        assertRefused(port, "close() returned");
    }

    private static void assertRefused(int port, String when) {
        assertThrows(ConnectException.class, () -> {
            try (Socket probe = new Socket()) {
                probe.connect(new InetSocketAddress(LOOPBACK, port), 5_000);
            }
        }, "the port still accepts connections after " + when);
    }

}
