package io.continuum.broker.relay.stream;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The publisher-to-router queue of one data stream (R-BUF 1-4). The publisher socket is read
 * continuously and every chunk is offered here without ever blocking the reader: a chunk is
 * charged its length plus {@link #CHUNK_OVERHEAD_BYTES} against both the stream's budget and the
 * session's; when either would be exceeded the offer fails and the stream must close with
 * {@code buffer_overflow}. The charge is returned once the writer has handed the chunk to the
 * HTTP/2 stream ({@link #written}).
 * <p>
 * One producer (the socket reader) and one consumer (the stream writer). The producer may write a chunk itself
 * instead of queueing it ({@link #offerOrClaim}): only while the queue is empty and the consumer waits, and the
 * consumer takes nothing until that chunk is written or handed back, so the bytes stay in order.
 */
public final class ChunkQueue {
    /** R-BUF 3: queue-item overhead charged per chunk. */
    public static final int CHUNK_OVERHEAD_BYTES = 64;

    private final int streamLimit;
    private final SessionBudget session;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private final ArrayDeque<byte[]> chunks = new ArrayDeque<>();
    private long streamUsed;
    private long peakUsed;
    private boolean closed;
    private boolean ended;
    /** Whether the consumer waits for a chunk (only then may the producer claim one: the writer is idle). */
    private boolean consumerWaiting;
    /** A chunk charged here that the producer is writing itself: the consumer takes nothing meanwhile. */
    private boolean claimed;

    /** What {@link #offerOrClaim} did with a chunk. */
    public enum Offer {
        /** Not taken (a budget would be exceeded, or the queue is closed or ended): nothing was charged. */
        REFUSED,
        /** Queued for the consumer. */
        QUEUED,
        /**
         * Charged but not queued: the caller writes it now and then calls {@link #claimWritten} or, if it could
         * not write it, {@link #claimReturned}.
         */
        CLAIMED
    }

    /**
     * Creates a queue.
     *
     * @param streamLimitBytes the session's negotiated {@code max_stream_buffer_bytes}
     * @param session          the session's shared budget
     */
    public ChunkQueue(int streamLimitBytes, SessionBudget session) {
        if (streamLimitBytes <= CHUNK_OVERHEAD_BYTES) {
            throw new IllegalArgumentException("stream budget too small: " + streamLimitBytes);
        }
        this.streamLimit = streamLimitBytes;
        this.session = session;
    }

    /**
     * Offers a chunk; never blocks.
     *
     * @param chunk bytes read from the publisher (owned by the queue from now on)
     * @return true when queued; false when it would exceed the stream or session budget (nothing
     *         was charged) or the queue is closed
     */
    public boolean offer(byte[] chunk) {
        return add(null, chunk, false) == Offer.QUEUED;
    }

    /**
     * Offers a read's bytes, or, when {@code claim} allows and the consumer waits on an empty queue, claims them for
     * the caller to write at once (charged like a queued chunk until then); never blocks. Queued bytes are copied
     * into a chunk of their exact length; claimed ones are not copied at all (the caller writes them from its own
     * buffer).
     *
     * @param bytes what was read, from position to limit: consumed when queued, untouched otherwise
     * @param claim whether the caller may write the bytes itself
     * @return what was done with them
     */
    public Offer offerOrClaim(ByteBuffer bytes, boolean claim) {
        return add(bytes, null, claim);
    }

    /** Either a read's bytes (copied if queued) or a chunk that is the queue's from now on. */
    private Offer add(ByteBuffer bytes, byte[] chunk, boolean claim) {
        int length = chunk != null ? chunk.length : bytes.remaining();
        long charge = charge(length);
        lock.lock();
        try {
            if (closed || ended) {
                return Offer.REFUSED;
            }
            if (streamUsed + charge > streamLimit) {
                return Offer.REFUSED;
            }
            if (!session.tryCharge(charge)) {
                return Offer.REFUSED;
            }
            streamUsed += charge;
            peakUsed = Math.max(peakUsed, streamUsed);
            if (claim && consumerWaiting && !claimed && chunks.isEmpty()) {
                claimed = true; // the consumer stays parked: no hand-off for these bytes
                return Offer.CLAIMED;
            }
            chunks.addLast(chunk != null ? chunk : copy(bytes));
            notEmpty.signal();
            return Offer.QUEUED;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The claimed bytes were handed to the HTTP/2 stream (or dropped with the stream): their charge is returned, and
     * the consumer takes what was queued meanwhile.
     *
     * @param length how many bytes {@link #offerOrClaim} claimed
     */
    public void claimWritten(int length) {
        lock.lock();
        try {
            claimed = false;
            streamUsed -= charge(length);
            if (!chunks.isEmpty() || ended || closed) {
                notEmpty.signal(); // only then: a consumer woken to find nothing would cost the hand-off saved
            }
        } finally {
            lock.unlock();
        }
        session.release(charge(length));
    }

    /**
     * The claimed bytes could not be written at once: copied, they go first in the queue, still charged, for the
     * consumer.
     *
     * @param bytes the bytes {@link #offerOrClaim} claimed, from position to limit (consumed)
     */
    public void claimReturned(ByteBuffer bytes) {
        lock.lock();
        try {
            claimed = false;
            if (closed) {
                long charge = charge(bytes.remaining());
                streamUsed -= charge; // close() discarded the rest; these go the same way
                session.release(charge);
                return;
            }
            chunks.addFirst(copy(bytes));
            notEmpty.signal();
        } finally {
            lock.unlock();
        }
    }

    private static byte[] copy(ByteBuffer bytes) {
        byte[] chunk = new byte[bytes.remaining()];
        bytes.get(chunk);
        return chunk;
    }

    /** @return whether the consumer waits for a chunk (tests: a claim is possible only then) */
    boolean consumerWaiting() {
        lock.lock();
        try {
            return consumerWaiting;
        } finally {
            lock.unlock();
        }
    }

    private static long charge(byte[] chunk) {
        return charge(chunk.length);
    }

    private static long charge(int length) {
        return (long) length + CHUNK_OVERHEAD_BYTES;
    }

    /**
     * Marks the end of the publisher's bytes: {@link #take} returns null once the queue is drained.
     */
    public void end() {
        lock.lock();
        try {
            ended = true;
            notEmpty.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes the next chunk, waiting for one. The chunk stays charged until {@link #written}.
     *
     * @return next chunk, or null after {@link #end} once drained, or after {@link #close}
     * @throws InterruptedException when interrupted
     */
    public byte[] take() throws InterruptedException {
        lock.lock();
        try {
            if (!awaitChunk()) {
                return null;
            }
            return chunks.pollFirst();
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: waits for a chunk; false once closed, or ended and drained. */
    private boolean awaitChunk() throws InterruptedException {
        // behind a claimed chunk nothing is taken, not even the end: its bytes go out first
        while (!closed && (claimed || (chunks.isEmpty() && !ended))) {
            consumerWaiting = true;
            try {
                notEmpty.await();
            } finally {
                consumerWaiting = false;
            }
        }
        return !closed && !chunks.isEmpty();
    }

    /**
     * Chunks taken together by {@link #takeBatch}: their bytes joined in order, and how many chunks they were
     * (each stays charged its length plus {@link #CHUNK_OVERHEAD_BYTES} until {@link #written(Batch)}).
     *
     * @param bytes  the chunks' bytes, in order
     * @param chunks how many chunks
     */
    public record Batch(byte[] bytes, int chunks) {
        long charge() {
            return (long) bytes.length + (long) chunks * CHUNK_OVERHEAD_BYTES;
        }
    }

    /**
     * Takes the next chunk, waiting for one, together with every further chunk already queued while the total
     * stays within {@code maxBytes} (a writer that fell behind then writes them in one go instead of one write
     * per chunk). A single chunk is returned as it is, without a copy.
     *
     * @param maxBytes most bytes to join (a first chunk larger than this is returned alone)
     * @return the batch, or null after {@link #end} once drained, or after {@link #close}
     * @throws InterruptedException when interrupted
     */
    public Batch takeBatch(int maxBytes) throws InterruptedException {
        lock.lock();
        try {
            if (!awaitChunk()) {
                return null;
            }
            byte[] first = chunks.pollFirst();
            byte[] next = chunks.peekFirst();
            if (next == null || first.length + next.length > maxBytes) {
                return new Batch(first, 1);
            }
            int total = first.length;
            int count = 0;
            for (byte[] c : chunks) {
                if (total + c.length > maxBytes) {
                    break;
                }
                total += c.length;
                count++;
            }
            byte[] joined = Arrays.copyOf(first, total);
            int at = first.length;
            for (int i = 0; i < count; i++) {
                byte[] c = chunks.pollFirst();
                System.arraycopy(c, 0, joined, at, c.length);
                at += c.length;
            }
            return new Batch(joined, count + 1);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns a taken batch's charge once it has been handed to the HTTP/2 stream.
     *
     * @param batch the batch {@link #takeBatch} returned
     */
    public void written(Batch batch) {
        release(batch.charge());
    }

    /**
     * Takes the next chunk, waiting at most {@code timeout}.
     *
     * @param timeout longest wait
     * @param unit    unit of {@code timeout}
     * @return next chunk; null at end, when closed, or on timeout (see {@link #isFinished})
     * @throws InterruptedException when interrupted
     */
    public byte[] poll(long timeout, TimeUnit unit) throws InterruptedException {
        long nanos = unit.toNanos(timeout);
        lock.lock();
        try {
            while (chunks.isEmpty() && !ended && !closed) {
                if (nanos <= 0) {
                    return null;
                }
                nanos = notEmpty.awaitNanos(nanos);
            }
            if (closed) {
                return null;
            }
            return chunks.pollFirst();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns a taken chunk's charge once it has been handed to the HTTP/2 stream.
     *
     * @param chunk the chunk {@link #take} returned
     */
    public void written(byte[] chunk) {
        release((long) chunk.length + CHUNK_OVERHEAD_BYTES);
    }

    /** Returns a charge to this stream's and the session's budget. */
    private void release(long charge) {
        lock.lock();
        try {
            streamUsed -= charge;
        } finally {
            lock.unlock();
        }
        session.release(charge);
    }

    /**
     * Discards everything queued, returns every charge, and wakes the consumer. Idempotent.
     * A chunk taken but not yet {@link #written} stays the taker's to release.
     */
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            long discarded = 0;
            for (byte[] chunk : chunks) {
                discarded += (long) chunk.length + CHUNK_OVERHEAD_BYTES;
            }
            chunks.clear();
            streamUsed -= discarded;
            session.release(discarded);
            notEmpty.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether the consumer has nothing more to take: closed, or ended and drained.
     *
     * @return true when finished
     */
    public boolean isFinished() {
        lock.lock();
        try {
            return closed || (ended && chunks.isEmpty() && !claimed);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether {@link #close} was called (as opposed to a normal {@link #end}).
     *
     * @return true once closed
     */
    public boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Bytes charged to this stream right now (queued and in-flight chunks, overhead included).
     *
     * @return charged bytes
     */
    public long usedBytes() {
        lock.lock();
        try {
            return streamUsed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Highest charge this stream reached.
     *
     * @return peak charged bytes
     */
    public long peakBytes() {
        lock.lock();
        try {
            return peakUsed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The stream budget.
     *
     * @return limit in bytes
     */
    public int limitBytes() {
        return streamLimit;
    }
}
