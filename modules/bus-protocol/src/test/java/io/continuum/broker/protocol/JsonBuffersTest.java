package io.continuum.broker.protocol;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.core.util.RecyclerPool;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A thread that encodes a frame and then lives on (a data stream's thread encodes {@code stream_opened}, then relays
 * for as long as the stream is open) keeps none of Jackson's buffers: they go back to one pool, bounded, whatever
 * the number of threads.
 */
class JsonBuffersTest {

    @Test
    void buffersAreRecycledThroughOneBoundedPoolNotOnePerThread() throws Exception {
        RecyclerPool<?> pool = Json.FACTORY._getRecyclerPool();
        assertFalse(pool instanceof JsonRecyclerPools.ThreadLocalPool,
                "a per-thread pool keeps a set of buffers for every live thread that ever encoded a frame");

        int threads = 200;
        CountDownLatch encoded = new CountDownLatch(threads);
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> alive = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            long streamId = i + 1;
            alive.add(Thread.ofVirtual().start(() -> {
                try {
                    FrameCodec.encode(new Frame.StreamOpened(streamId));
                } finally {
                    encoded.countDown();
                }
                try {
                    release.await(); // alive, as a stream's thread is while its stream is open
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        encoded.await();
        try {
            assertTrue(pool.pooledCount() <= Json.RECYCLED_BUFFER_SETS,
                    "buffer sets pooled with " + threads + " live threads: " + pool.pooledCount());
        } finally {
            release.countDown();
            for (Thread t : alive) {
                t.join();
            }
        }
    }
}
