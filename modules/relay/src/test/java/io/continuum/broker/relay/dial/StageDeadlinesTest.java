package io.continuum.broker.relay.dial;

import io.continuum.broker.testing.net.LoopbackListener;
import static io.continuum.broker.relay.dial.Fixtures.NS;
import static io.continuum.broker.relay.dial.Fixtures.check;
import static io.continuum.broker.relay.dial.Fixtures.dialer;
import static io.continuum.broker.relay.dial.Fixtures.target;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.continuum.broker.relay.MutableView;
import io.continuum.broker.protocol.Code;

/**
 * R-OPEN: each stage of opening a stream has its own deadline (DNS 5 s, then connect 10 s), and lookups a
 * hung resolver never finishes hold a bounded number of threads. The resolver is the injected
 * {@link NameResolver}; sockets are real.
 */
class StageDeadlinesTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void dnsTimeWithinItsOwnDeadlineDoesNotEatTheConnectBudget() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 8)) {
            // DNS answers after 2.5 s (its deadline is 5 s); the connect budget is 2 s. Counted from the
            // subscribe, nothing would be left to connect with; counted from the end of DNS, it is all there.
            NameResolver slowDns = name -> {
                try {
                    Thread.sleep(2_500);
                } catch (InterruptedException e) {
                    throw new InterruptedIOException("lookup interrupted");
                }
                return List.of(InetAddress.getLoopbackAddress());
            };
            RecordingConnector connector = new RecordingConnector();
            TargetCheck check = check(new MutableView().synced(true).advertise(NS, "slow.publisher.test", publisher.port()),
                    slowDns, Duration.ofSeconds(5), dialer(Duration.ofSeconds(2), Duration.ofSeconds(2), 4, connector));

            DialResult outcome = BackgroundDial.start(check, target("slow.publisher.test", publisher.port()))
                    .await(WAIT);

            assertInstanceOf(DialResult.Connected.class, outcome, () -> "refused: " + outcome).socket().close();
            assertEquals(1, connector.attempts.size());
        }
    }

    @Test
    void hundredsOfSubscribesOnAHungResolverHoldABoundedNumberOfLookups() throws Exception {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostRunning = new AtomicInteger();
        CountDownLatch answer = new CountDownLatch(1);
        // Like the JDK's native lookup: an interrupt does not end it, only the resolver answering does.
        NameResolver hung = name -> {
            mostRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            try {
                while (true) {
                    try {
                        answer.await();
                        return List.of(InetAddress.getLoopbackAddress());
                    } catch (InterruptedException ignored) {
                        // not interruptible
                    }
                }
            } finally {
                running.decrementAndGet();
            }
        };
        int subscribes = 300;
        MutableView view = new MutableView().synced(true);
        for (int i = 0; i < subscribes; i++) {
            view.advertise(NS, "hung-" + i + ".publisher.test", 5557);
        }
        RecordingConnector connector = new RecordingConnector();
        TargetCheck check = check(view, hung, Duration.ofMillis(300),
                dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4, connector));
        try {
            List<BackgroundDial> attempts = new ArrayList<>();
            for (int i = 0; i < subscribes; i++) {
                attempts.add(BackgroundDial.start(check, target("hung-" + i + ".publisher.test", 5557)));
            }
            for (BackgroundDial attempt : attempts) {
                DialResult.Refused refused = assertInstanceOf(DialResult.Refused.class, attempt.await(WAIT));
                assertEquals(Code.UPSTREAM_CONNECT_FAILED, refused.code(), "section 5 row 8");
            }
            // The default bound, 32 lookups in flight, abandoned ones included.
            assertTrue(mostRunning.get() <= 32, "lookups running at once: " + mostRunning.get());
            assertTrue(running.get() <= 32, "abandoned lookups still running: " + running.get());
            assertEquals(List.of(), connector.attempts);
        } finally {
            answer.countDown();
        }
    }
}
