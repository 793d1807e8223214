package io.continuum.broker.relay.hostile;

import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.Socket;
import java.util.Random;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.testing.bus.RouterDataStream;
import io.continuum.broker.testing.bus.RouterSession;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A router that floods the session with heartbeats and frames of unknown types (bus-protocol-v1.md
 * section 3: unknown types are ignored and counted): the broker reads them as fast as they come,
 * counts every unknown one, keeps nothing of them, and its streams keep flowing meanwhile.
 */
class FrameFloodTest {
    @Test
    void aFloodOfHeartbeatsAndUnknownFramesIsIgnoredCountedAndKeepsNothing() throws Exception {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        try (BrokerHarness h = new BrokerHarness()) {
            BrokerHarness.Subscribed subscribed = h.startSubscribed(1);
            System.gc();
            long heapBefore = memory.getHeapMemoryUsage().getUsed();

            byte[] heartbeat = FrameCodec.encode(Frame.Heartbeat.INSTANCE);
            byte[] unknown = FrameCodec.encodeJson("{\"type\":\"x-flood\",\"payload\":\"" + "u".repeat(100) + "\"}");
            ByteArrayOutputStream batch = new ByteArrayOutputStream();
            int perBatch = 0;
            while (batch.size() < 1024 * 1024) {
                batch.write(heartbeat);
                batch.write(unknown);
                perBatch++;
            }
            byte[] oneMiB = batch.toByteArray();
            int batches = 16;
            Random random = new Random(5);
            for (int i = 0; i < batches; i++) {
                subscribed.session().sendRaw(oneMiB);
                // The stream keeps flowing between batches.
                byte[] bytes = new byte[1_000];
                random.nextBytes(bytes);
                subscribed.upstream().getOutputStream().write(bytes);
                assertArrayEquals(bytes, subscribed.stream().readFromBroker(bytes.length), "stream bytes during batch " + i);
            }
            long unknownSent = (long) perBatch * batches;
            await(() -> h.metrics.get("unknown_frames_total") == unknownSent,
                    "every unknown frame counted");
            System.gc();
            long retained = memory.getHeapMemoryUsage().getUsed() - heapBefore;
            // 16 MiB and ~210,000 frames went through; a broker that kept their bytes would retain all of it
            // (measured growth without any such leak: about 4 MiB of pools and JIT noise).
            System.out.println("frame flood: " + unknownSent + " unknown frames and as many heartbeats, heap grew by "
                    + retained + " bytes");
            assertTrue(retained < 12L * 1024 * 1024, "heap grew by " + retained + " bytes");
            assertEquals(1, h.router.sessionAttempts(), "the session stayed up");
            assertTrue(h.metrics.connected());
        }
    }
}
