package io.continuum.broker.testing.leaks;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * The leak check can fail: a test that leaves a thread, a socket or a gauge behind fails naming it; one that
 * releases everything, even a little after it returned, passes.
 */
class LeakCheckTest {
    private static final CountDownLatch RELEASE = new CountDownLatch(1);
    private static volatile ServerSocket leakedSocket;
    private static final AtomicLong GAUGE = new AtomicLong();

    private static Events run(Class<?> sample) {
        return EngineTestKit.engine("junit-jupiter")
                .configurationParameter(OnlyInTestKit.PARAMETER, "true")
                .selectors(selectClass(sample))
                .execute()
                .testEvents();
    }

    private static String failureOf(Events events) {
        assertEquals(1, events.failed().count(), "the sample test fails");
        return events.failed().stream().findFirst().orElseThrow().getPayload(
                org.junit.platform.engine.TestExecutionResult.class).orElseThrow().getThrowable().orElseThrow()
                .getMessage();
    }

    @AfterEach
    void cleanUp() throws IOException {
        RELEASE.countDown();
        if (leakedSocket != null) {
            leakedSocket.close();
        }
    }

    @Test
    void aThreadLeftRunningFailsTheTestNamingTheThread() {
        String message = failureOf(run(LeaksAThread.class));
        assertTrue(message.contains("thread \"leaky-sample-thread\""), message);
    }

    @Test
    void aSocketLeftOpenFailsTheTestNamingTheDescriptor() {
        String message = failureOf(run(LeaksASocket.class));
        assertTrue(message.contains("-> socket:["), message);
    }

    @Test
    void aGaugeThatDoesNotReturnFailsTheTest() {
        String message = failureOf(run(LeavesAGauge.class));
        assertTrue(message.contains("gauge open streams = 1, expected 0"), message);
    }

    @Test
    void whatIsReleasedShortlyAfterTheTestIsNotALeak() {
        Events events = run(ReleasesLate.class);
        assertEquals(1, events.succeeded().count(), () -> "the sample passes, but: " + events.failed().stream()
                .map(e -> e.getPayload(org.junit.platform.engine.TestExecutionResult.class).orElseThrow()
                        .getThrowable().orElseThrow().getMessage()).toList());
    }

    @Test
    void theCensusSeesVirtualThreads() throws InterruptedException {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch stop = new CountDownLatch(1);
        Thread t = Thread.ofVirtual().name("census-probe").start(() -> {
            started.countDown();
            try {
                stop.await();
            } catch (InterruptedException ignored) {
                // end
            }
        });
        started.await();
        try {
            assertEquals("census-probe", Census.threads().get(t.threadId()).name());
        } finally {
            stop.countDown();
            t.join();
        }
    }

    @OnlyInTestKit
    static class LeaksAThread {
        @RegisterExtension
        final LeakCheck leaks = LeakCheck.builder().settle(Duration.ofMillis(300)).build();

        @Test
        void leaves() {
            Thread.ofPlatform().name("leaky-sample-thread").daemon().start(() -> {
                try {
                    RELEASE.await();
                } catch (InterruptedException ignored) {
                    // end
                }
            });
        }
    }

    @OnlyInTestKit
    static class LeaksASocket {
        @RegisterExtension
        final LeakCheck leaks = LeakCheck.builder().settle(Duration.ofMillis(300)).build();

        @Test
        void leaves() throws IOException {
            leakedSocket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        }
    }

    @OnlyInTestKit
    static class LeavesAGauge {
        @RegisterExtension
        final LeakCheck leaks = LeakCheck.builder().settle(Duration.ofMillis(300)).build();

        @Test
        void leaves() {
            GAUGE.set(1);
            LeakCheck.expect("open streams", GAUGE::get, 0);
        }
    }

    @OnlyInTestKit
    static class ReleasesLate {
        @RegisterExtension
        final LeakCheck leaks = LeakCheck.builder().settle(Duration.ofSeconds(10)).build();

        @Test
        void releasesAfterReturning() throws IOException {
            ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            AtomicLong streams = new AtomicLong(1);
            LeakCheck.expect("open streams", streams::get, 0);
            Thread.ofVirtual().name("late-release").start(() -> {
                try {
                    Thread.sleep(200); // the point of the sample: released after the test method returned
                    socket.close();
                } catch (InterruptedException | IOException ignored) {
                    // end
                }
                streams.set(0);
            });
        }
    }
}
