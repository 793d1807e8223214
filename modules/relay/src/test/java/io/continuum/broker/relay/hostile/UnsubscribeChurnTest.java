package io.continuum.broker.relay.hostile;

import java.util.HashMap;
import java.util.Map;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.testing.bus.EndToEnd;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.net.LoopbackListener;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A router that unsubscribes every stream right behind its subscribe, hundreds of times
 * (bus-protocol-v1.md section 5: an unsubscribe that arrives first aborts silently; otherwise one
 * answer and the stream is reset). Each abort lands at a different point of the opening (dial,
 * slot, HEADERS): whatever it interrupts, only that stream ends, never the session's connection.
 */
@EndToEnd
class UnsubscribeChurnTest {
    @Test
    void subscribeThenUnsubscribeAtOnceNeverAnswersTwiceLeavesNothingOpenAndKeepsTheSession() throws Exception {
        int pairs = 300;
        try (BrokerHarness h = new BrokerHarness(c -> c, r -> r.tcpNoDelay(true))) {
            LoopbackListener publisher = h.publisher();
            RouterSession session = h.startSession();
            for (long id = 1; id <= pairs; id++) {
                session.sendRaw(concat(FrameCodec.encode(new Frame.Subscribe(id,
                        new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port()))),
                        FrameCodec.encode(new Frame.Unsubscribe(id))));
            }
            // A last, ordinary subscribe: its answer comes after every abort above was handled or raced.
            session.subscribe(pairs + 1, NAMESPACE, "127.0.0.1", publisher.port());
            assertInstanceOf(Frame.StreamOpened.class, session.awaitAnswer(pairs + 1, WAIT));
            await(() -> h.broker.openStreams() == 1, "only the last stream is open");
            Map<Long, Integer> answers = new HashMap<>();
            for (Frame f : session.drainReceived()) {
                if (f instanceof Frame.StreamOpened o) {
                    answers.merge(o.streamId(), 1, Integer::sum);
                } else if (f instanceof Frame.StreamRefused r) {
                    answers.merge(r.streamId(), 1, Integer::sum);
                }
            }
            assertTrue(answers.values().stream().allMatch(n -> n == 1), "never two answers: " + answers);
            assertEquals(1, h.router.sessionAttempts(), "the connection survived every abort");
            assertEquals(0, h.metrics.get("session_ends_total{reason=connection_lost}"));
            assertTrue(h.metrics.connected());
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] all = new byte[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
