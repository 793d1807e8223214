package io.continuum.broker.relay.stream;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** R-BUF 1-4: bounded, never-blocking publisher-to-router queue. */
class ChunkQueueTest {
    private static final int MIN_STREAM_BUDGET = 16_384;

    @Test
    void everyChunkIsChargedItsLengthPlus64BytesAgainstBothBudgets() {
        SessionBudget session = new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES);
        ChunkQueue queue = new ChunkQueue(MIN_STREAM_BUDGET, session);
        assertTrue(queue.offer(new byte[100]));
        assertTrue(queue.offer(new byte[1]));
        assertEquals(100 + 64 + 1 + 64, queue.usedBytes());
        assertEquals(100 + 64 + 1 + 64, session.usedBytes());
    }

    @Test
    void tinyChunksAreAccountedAtTheirTrueCostAtTheMinimumBudget() {
        // R-BUF 3: 16 KiB / (1 + 64) = 252 one-byte chunks fit, the 253rd does not.
        ChunkQueue queue = new ChunkQueue(MIN_STREAM_BUDGET, new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES));
        int accepted = 0;
        while (queue.offer(new byte[1])) {
            accepted++;
        }
        assertEquals(MIN_STREAM_BUDGET / 65, accepted);
    }

    @Test
    void aChunkThatWouldExceedTheStreamBudgetIsRefusedAndNothingIsCharged() {
        SessionBudget session = new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES);
        ChunkQueue queue = new ChunkQueue(MIN_STREAM_BUDGET, session);
        assertTrue(queue.offer(new byte[MIN_STREAM_BUDGET - 64]));
        assertFalse(queue.offer(new byte[1]));
        assertEquals(MIN_STREAM_BUDGET, queue.usedBytes());
        assertEquals(MIN_STREAM_BUDGET, session.usedBytes());
    }

    @Test
    void theSessionBudgetBoundsAllStreamsTogether() {
        SessionBudget session = new SessionBudget(100_000);
        ChunkQueue a = new ChunkQueue(1_048_576, session);
        ChunkQueue b = new ChunkQueue(1_048_576, session);
        assertTrue(a.offer(new byte[60_000]));
        assertFalse(b.offer(new byte[40_000]), "60,064 + 40,064 > 100,000");
        assertTrue(b.offer(new byte[39_000]));
        assertEquals(60_064 + 39_064, session.usedBytes());
    }

    @Test
    void aChunkIsClaimedOnlyWhileTheWriterWaitsOnAnEmptyQueue() throws Exception {
        SessionBudget session = new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES);
        ChunkQueue queue = new ChunkQueue(MIN_STREAM_BUDGET, session);
        byte[] first = {1};
        assertEquals(ChunkQueue.Offer.QUEUED, queue.offerOrClaim(ByteBuffer.wrap(first), true), "no writer waits: queued");
        ChunkQueue.Batch firstBatch = queue.takeBatch(1_024);
        assertArrayEquals(first, firstBatch.bytes());
        queue.written(firstBatch);

        java.util.concurrent.BlockingQueue<byte[]> taken = new java.util.concurrent.LinkedBlockingQueue<>();
        Thread writer = Thread.ofVirtual().start(() -> {
            try {
                for (int i = 0; i < 2; i++) {
                    ChunkQueue.Batch b = queue.takeBatch(1_024);
                    taken.add(b.bytes());
                    queue.written(b);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        io.continuum.broker.testing.await.Poll.await(queue::consumerWaiting, "the writer waits");
        ByteBuffer claimed = ByteBuffer.wrap(new byte[] {2});
        assertEquals(ChunkQueue.Offer.CLAIMED, queue.offerOrClaim(claimed, true));
        assertEquals(1, claimed.remaining(), "claimed bytes are not copied: the caller writes them");
        assertEquals(1 + 64, session.usedBytes(), "a claimed chunk is charged like a queued one");
        byte[] behind = {3};
        assertEquals(ChunkQueue.Offer.QUEUED, queue.offerOrClaim(ByteBuffer.wrap(behind), true), "one claim at a time");
        queue.end();
        assertNull(taken.poll(50, TimeUnit.MILLISECONDS), "nothing is taken past a claimed chunk, not the end either");

        queue.claimWritten(1);
        assertArrayEquals(behind, taken.poll(5, TimeUnit.SECONDS), "then what queued behind it");
        writer.join();
        assertEquals(0, session.usedBytes());
        assertEquals(0, queue.usedBytes());
    }

    @Test
    void aQueuedReadIsCopiedSoTheReadersBufferCanTakeTheNextRead() throws Exception {
        ChunkQueue queue = new ChunkQueue(MIN_STREAM_BUDGET, new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES));
        ByteBuffer readBuffer = ByteBuffer.allocateDirect(8);
        readBuffer.put(new byte[] {1, 2, 3}).flip();
        assertEquals(ChunkQueue.Offer.QUEUED, queue.offerOrClaim(readBuffer, true));
        assertEquals(0, readBuffer.remaining(), "consumed");
        readBuffer.clear().put(new byte[] {9, 9, 9}).flip(); // the next read, into the same buffer
        assertEquals(ChunkQueue.Offer.QUEUED, queue.offerOrClaim(readBuffer, false));
        assertArrayEquals(new byte[] {1, 2, 3, 9, 9, 9}, queue.takeBatch(1_024).bytes());
        assertEquals(2 * (3 + 64), queue.usedBytes(), "charged by length until written");
    }

    @Test
    void aClaimedChunkThatCouldNotBeWrittenGoesFirst() throws Exception {
        ChunkQueue queue = new ChunkQueue(MIN_STREAM_BUDGET, new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES));
        Thread writer = Thread.ofVirtual().start(() -> {
            try {
                queue.take();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        io.continuum.broker.testing.await.Poll.await(queue::consumerWaiting, "the writer waits");
        ByteBuffer claimed = ByteBuffer.wrap(new byte[] {1});
        assertEquals(ChunkQueue.Offer.CLAIMED, queue.offerOrClaim(claimed, true));
        writer.interrupt();
        writer.join();
        assertEquals(ChunkQueue.Offer.QUEUED, queue.offerOrClaim(ByteBuffer.wrap(new byte[] {2}), true));
        queue.claimReturned(claimed);
        assertArrayEquals(new byte[] {1, 2}, queue.takeBatch(1_024).bytes(), "the claimed chunk, then the rest");
        assertEquals(ChunkQueue.Offer.QUEUED, queue.offerOrClaim(ByteBuffer.wrap(new byte[] {3}), false), "no claim unless allowed");
    }

    @Test
    void writtenChunksReturnTheirChargeAndKeepOrder() throws InterruptedException {
        SessionBudget session = new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES);
        ChunkQueue queue = new ChunkQueue(MIN_STREAM_BUDGET, session);
        byte[] first = {1, 2, 3};
        byte[] second = {4};
        queue.offer(first);
        queue.offer(second);
        byte[] taken = queue.take();
        assertArrayEquals(first, taken);
        assertEquals(3 + 64 + 1 + 64, queue.usedBytes(), "a taken chunk stays charged until written");
        queue.written(taken);
        assertEquals(1 + 64, queue.usedBytes());
        assertArrayEquals(second, queue.take());
    }

    @Test
    void endDeliversWhatIsQueuedThenNull() throws InterruptedException {
        ChunkQueue queue = new ChunkQueue(MIN_STREAM_BUDGET, new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES));
        queue.offer(new byte[] {9});
        queue.end();
        assertFalse(queue.offer(new byte[] {10}), "nothing is accepted after the end");
        assertArrayEquals(new byte[] {9}, queue.take());
        assertNull(queue.take());
        assertTrue(queue.isFinished());
    }

    @Test
    void closeReturnsEveryChargeToTheSessionAndWakesTheConsumer() throws Exception {
        SessionBudget session = new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES);
        ChunkQueue queue = new ChunkQueue(MIN_STREAM_BUDGET, session);
        queue.offer(new byte[1000]);
        byte[] taken = queue.take();
        queue.offer(new byte[500]);
        queue.offer(new byte[200]);

        ChunkQueue empty = new ChunkQueue(MIN_STREAM_BUDGET, session);
        Thread consumer = Thread.ofVirtual().start(() -> {
            try {
                assertNull(empty.take());
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        empty.close();
        consumer.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(consumer.isAlive());

        queue.close();
        assertEquals(1000 + 64, session.usedBytes(), "only the in-flight chunk is still charged");
        queue.written(taken);
        assertEquals(0, session.usedBytes());
        queue.close();
        assertEquals(0, session.usedBytes(), "close is idempotent");
    }

    @Test
    void pollGivesUpAfterItsTimeout() throws InterruptedException {
        ChunkQueue queue = new ChunkQueue(MIN_STREAM_BUDGET, new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES));
        assertNull(queue.poll(1, TimeUnit.MILLISECONDS));
        assertFalse(queue.isFinished());
    }
    @Test
    void aBatchJoinsQueuedChunksInOrderUpToItsLimitAndKeepsEachChunksChargeUntilWritten() throws InterruptedException {
        SessionBudget session = new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES);
        ChunkQueue queue = new ChunkQueue(1_048_576, session);
        assertTrue(queue.offer(new byte[] {1, 2}));
        assertTrue(queue.offer(new byte[] {3}));
        assertTrue(queue.offer(new byte[] {4, 5}));
        assertTrue(queue.offer(new byte[] {6}));
        ChunkQueue.Batch batch = queue.takeBatch(5);
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, batch.bytes(), "whole chunks, in order, at most 5 bytes");
        assertEquals(3, batch.chunks());
        assertEquals(6 + 4 * 64, session.usedBytes(), "taken chunks stay charged (R-BUF 3) until written");
        queue.written(batch);
        assertEquals(1 + 64, queue.usedBytes());
        assertEquals(1 + 64, session.usedBytes());
        queue.end();
        ChunkQueue.Batch last = queue.takeBatch(5);
        assertArrayEquals(new byte[] {6}, last.bytes());
        queue.written(last);
        assertNull(queue.takeBatch(5));
        assertEquals(0, session.usedBytes());
    }

    @Test
    void aLoneChunkOrOneOverTheLimitIsHandedOverAsItIs() throws InterruptedException {
        ChunkQueue queue = new ChunkQueue(1_048_576, new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES));
        byte[] big = new byte[10];
        byte[] next = new byte[1];
        assertTrue(queue.offer(big));
        assertTrue(queue.offer(next));
        ChunkQueue.Batch first = queue.takeBatch(4);
        assertTrue(first.bytes() == big, "not copied");
        assertEquals(1, first.chunks());
        assertTrue(queue.takeBatch(4).bytes() == next);
    }
}
