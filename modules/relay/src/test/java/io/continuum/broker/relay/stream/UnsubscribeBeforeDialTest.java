package io.continuum.broker.relay.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.dial.DialResult;
import io.continuum.broker.relay.transport.BusStream;
import org.junit.jupiter.api.Test;

/**
 * Issue 44 item 3: an {@code unsubscribe} that arrives before a stream's opener has begun its dial cancels the
 * dial: no publisher connect at all, and nothing is written to the router (as for any unsubscribe). The stream is
 * unsubscribed before its opener starts, which is that race with its order pinned. Before, the opener dialed all
 * the same (the abort found no dial to interrupt) and closed the publisher connection it had just made.
 */
class UnsubscribeBeforeDialTest {

    @Test
    void anUnsubscribeBeforeTheDialMeansNoDialAndNoAnswer() throws Exception {
        Context context = new Context();
        DataStream stream = new DataStream(context, 7, new Target.ZmqTcp("dynamo", "127.0.0.1", 5557));

        stream.unsubscribe(); // read by the session's reader before the opener got to the dial
        stream.start();
        stream.opener().join(Duration.ofSeconds(20));

        assertTrue(!stream.opener().isAlive(), "the opener finished");
        assertEquals(0, context.dials.get(), "no dial, so no publisher connect");
        assertEquals(List.of("ended without an answer"), context.events);
        assertEquals(DataStream.State.CLOSED, stream.state());
    }

    /** The session side, recording what the stream asks of it; the dial is recorded, never made. */
    private static final class Context implements StreamContext {
        final AtomicInteger dials = new AtomicInteger();
        final List<String> events = new CopyOnWriteArrayList<>();

        @Override
        public TargetDialer dialer() {
            return target -> {
                dials.incrementAndGet();
                return new DialResult.Cancelled();
            };
        }

        @Override
        public BusStream open(long streamId, BooleanSupplier commit) {
            events.add("HTTP/2 stream opened");
            return null;
        }

        @Override
        public Duration slotTimeout() {
            return Duration.ofSeconds(5);
        }

        @Override
        public Duration responseHeadTimeout() {
            return Duration.ofSeconds(10);
        }

        @Override
        public PublisherReads publisherReads() {
            throw new AssertionError("no publisher socket to read");
        }

        @Override
        public ChunkQueue newQueue() {
            throw new AssertionError("no queue for a stream that never opened");
        }

        @Override
        public RelayMetrics metrics() {
            return RelayMetrics.NOOP;
        }

        @Override
        public void closed(long streamId, Code code) {
            events.add("stream_closed " + code);
        }

        @Override
        public void opened(DataStream stream) {
            events.add("stream_opened");
        }

        @Override
        public void refused(long streamId, Code code, String reason) {
            events.add("stream_refused " + code);
        }

        @Override
        public void ended(DataStream stream, boolean wasOpen, Runnable answer) {
            answer.run();
            events.add("ended without an answer");
        }
    }
}
