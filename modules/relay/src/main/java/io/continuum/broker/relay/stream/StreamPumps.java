package io.continuum.broker.relay.stream;

import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.relay.api.RelayMetrics.Direction;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.ConnectionLostException;
import io.continuum.broker.relay.transport.MalformedResponseException;
import io.continuum.broker.relay.transport.ResponseHead;
import io.continuum.broker.relay.transport.TransportException;

/**
 * The bytes of one open data stream (bus-protocol-v1.md section 6; R-BUF 1-4) in three parts: the upstream reader
 * (publisher socket to the {@link ChunkQueue}, never blocked: this class is its {@link PublisherReads.Sink}, called
 * by the session's readiness loop), the upstream writer (queue to the HTTP/2 stream, a virtual thread) and the
 * downstream pump (HTTP/2 stream to the publisher socket, window replenished only as bytes reach the socket; the
 * stream's opener thread, which after the router's end of its body watches for the stream's end). How the bytes
 * end decides how the stream closes; the closing itself is the stream's.
 */
final class StreamPumps implements PublisherReads.Sink {
    /** The stream's events keep one logger name, {@link DataStream}'s, as operators filter on it. */
    private static final EventLog LOG = EventLog.of(DataStream.class);
    /** The most one read of a publisher socket takes; each read becomes one chunk, charged 64 bytes of budget. */
    static final int READ_CHUNK_BYTES = 64 * 1024;
    /** The least a read may take, however small the stream's budget. */
    static final int MIN_READ_BYTES = 2 * 1024;
    /** How long one wait for a half-closed stream's end lasts before the next; any length is right. */
    private static final Duration WATCH_SLICE = Duration.ofHours(1);
    /**
     * After publisher EOF and END_STREAM, how long the router has to end its response before the broker resets the
     * HTTP/2 stream (RST_STREAM CANCEL) to free its slot. {@code stream_closed} does not wait for it. One second: a
     * router that reads its request body promptly sees END_STREAM and answers with its own within one round trip
     * (a few hundred milliseconds across continents), and HTTP/2 servers may drop request DATA their application
     * has not read yet when RST_STREAM arrives; a subscribe waiting for the slot meanwhile has 5 s (check 11).
     */
    static final Duration END_GRACE = Duration.ofSeconds(1);
    /**
     * After publisher EOF, how long the flush of what is queued may go without writing a byte (the router's windows
     * shut) before the broker stops waiting: it resets the stream and reports {@code upstream_closed} anyway, so a
     * router that reads nothing still learns of the end within a second. A router that keeps reading gets it all.
     */
    static final Duration FLUSH_STALL = Duration.ofSeconds(1);

    /** How the stream ends; the closing itself is the stream's ({@link DataStream}). */
    interface Closer {
        /** Ends the stream once, resetting its HTTP/2 stream; {@code code} null closes it without a {@code stream_closed}. */
        boolean close(Code code);

        /**
         * Ends the stream once after its request body ended (END_STREAM written): reports {@code code} at once and
         * leaves the HTTP/2 stream open for the router's end; the caller releases it ({@link #END_GRACE}).
         */
        boolean closeEnded(Code code);
    }

    private final long streamId;
    private final Socket socket;
    private final SocketChannel channel;
    private final PublisherReads reads;
    private final BusStream stream;
    private final ChunkQueue queue;
    private final RelayMetrics metrics;
    private final Duration responseHead;
    private final BooleanSupplier open;
    private final Closer closer;
    private final AtomicLong bytesToRouter = new AtomicLong();
    private final AtomicLong bytesToPublisher = new AtomicLong();
    /** Set when a write to the publisher failed, before the queue is ended for it. */
    private volatile boolean publisherWriteFailed;
    /** Set before the request body's END_STREAM is written (publisher EOF). */
    private volatile boolean requestEnded;
    /** Set when the flush after EOF stalled for {@link #FLUSH_STALL}, before the stream is closed for it. */
    private volatile boolean flushAbandoned;
    // the reader's state: only the readiness loop's thread touches these
    private final int readBytes;
    private final long nearBudgetBytes;
    private boolean nearBudget;
    /** The socket's registration with the readiness loop; null until {@link #run}. */
    private volatile SelectionKey key;

    /**
     * @param socket a connected socket with a channel ({@link java.nio.channels.SocketChannel#socket()}): the
     *               readiness loop reads it
     */
    StreamPumps(long streamId, Socket socket, PublisherReads reads, BusStream stream, ChunkQueue queue,
                RelayMetrics metrics, Duration responseHead, BooleanSupplier open, Closer closer) {
        this.streamId = streamId;
        this.socket = socket;
        this.channel = socket.getChannel();
        if (channel == null) {
            throw new IllegalArgumentException("publisher socket has no channel: " + socket);
        }
        this.reads = reads;
        this.readBytes = readBytes(queue.limitBytes());
        this.nearBudgetBytes = (long) queue.limitBytes() * RelayMetrics.NEAR_BUDGET_PERCENT / 100;
        this.stream = stream;
        this.queue = queue;
        this.metrics = metrics;
        this.responseHead = responseHead;
        this.open = open;
        this.closer = closer;
    }

    /**
     * Hands the socket to the session's readiness loop, starts the upstream writer, and runs the downstream pump
     * on the calling thread.
     */
    void run() {
        try {
            key = reads.register(channel, this);
            if (!channel.isOpen()) {
                socketClosed(); // closed while it registered: its close found no key to release
            }
        } catch (IOException e) {
            // the socket closed already, or the session's loop did (the session is ending)
            ended(e);
        }
        Thread.ofVirtual().name("stream-" + streamId + "-up-write").start(this::pumpQueueToRouter);
        pumpRouterToPublisher();
    }

    /** After the stream closed the socket: its registration is released, a downstream write waiting wakes up. */
    void socketClosed() {
        SelectionKey k = key;
        if (k != null) {
            reads.wakeup(k);
        }
    }

    ChunkQueue queue() {
        return queue;
    }

    long bytesToRouter() {
        return bytesToRouter.get();
    }

    long bytesToPublisher() {
        return bytesToPublisher.get();
    }

    /**
     * The most one read takes: 64 KiB, but never more than a quarter of the stream's budget (less the per-chunk
     * charge), so one read of a burst cannot overflow a stream whose router keeps up: at the 16 KiB minimum budget
     * a 64 KiB read would be charged more than the whole budget at once (R-BUF 1, 3).
     */
    static int readBytes(int streamBudgetBytes) {
        int quarter = (streamBudgetBytes - ChunkQueue.CHUNK_OVERHEAD_BYTES) / 4;
        return Math.clamp(quarter, MIN_READ_BYTES, READ_CHUNK_BYTES);
    }

    // ---------------------------------------------------------------- publisher to router, part 1: the reader
    // Called by the session's readiness loop, which reads the socket continuously, never back-pressured (R-BUF 4).
    // Nothing here waits: an add takes no window it lacks and never touches the socket (the loop's flush may wait
    // for it, bounded by PublisherReads.STALL), and the one close it can cause runs on a thread of its own.

    @Override
    public int readBytes() {
        return readBytes;
    }

    @Override
    public PublisherReads.Taken chunk(ByteBuffer bytes, boolean mayWrite) {
        ChunkQueue q = queue;
        int length = bytes.remaining();
        switch (q.offerOrClaim(bytes, mayWrite)) {
            case CLAIMED -> {
                return writeClaimed(bytes, length);
            }
            case REFUSED -> {
                // A queue ended by a failed write toward the publisher refuses offers too: that is the socket
                // error ending the stream (upstream_closed, by the writer), not an overflow.
                if (open.getAsBoolean() && !publisherWriteFailed) {
                    // the close resets the HTTP/2 stream, which may wait behind other streams' DATA: not on the loop
                    Thread.ofVirtual().name("stream-" + streamId + "-overflow")
                            .start(() -> closer.close(Code.BUFFER_OVERFLOW));
                }
                return PublisherReads.Taken.CLOSED;
            }
            default -> {
                return queued();
            }
        }
    }

    private PublisherReads.Taken queued() {
        if (!nearBudget && queue.usedBytes() >= nearBudgetBytes) {
            nearBudget = true;
            metrics.streamNearBudget();
        }
        return PublisherReads.Taken.QUEUED;
    }

    /**
     * The stream's writer is idle and nothing is queued: the loop's thread adds the chunk to the connection's next
     * write itself, if the router's windows take all of it now (one wake-up per message instead of two), and
     * flushes at the end of its round ({@link #flush}: one socket write for every stream it served). Otherwise the
     * chunk goes to the queue, first, for the writer.
     */
    private PublisherReads.Taken writeClaimed(ByteBuffer bytes, int length) {
        boolean added;
        try {
            added = stream.tryAdd(bytes);
        } catch (TransportException e) {
            queue.claimWritten(length); // dropped with the stream, as a writer's failed chunk is
            writeFailed(e);
            return PublisherReads.Taken.CLOSED;
        }
        if (!added) {
            queue.claimReturned(bytes);
            return queued();
        }
        bytesToRouter.addAndGet(length);
        metrics.relayed(Direction.UPSTREAM_TO_ROUTER, length);
        queue.claimWritten(length);
        return PublisherReads.Taken.ADDED;
    }

    @Override
    public void flush() {
        try {
            stream.flush();
        } catch (TransportException e) {
            writeFailed(e); // the connection is lost: every stream learns it, this one here
        }
    }

    private void writeFailed(TransportException e) {
        LOG.debug("stream_write_failed").field("stream_id", streamId).cause(e).log();
        // closing may wait behind other streams' frames: not on the loop
        Thread.ofVirtual().name("stream-" + streamId + "-write-failed").start(() -> closeAfter(e));
    }

    @Override
    public void ended(IOException failure) {
        if (failure != null) {
            if (!open.getAsBoolean()) {
                return;
            }
            LOG.debug("publisher_read_failed").field("stream_id", streamId).cause(failure).log();
        }
        // EOF or socket error: flush what is queued, end the request body, report upstream_closed.
        publisherEnded();
    }

    /** The publisher's bytes are complete (EOF or socket error): the flush begins, bounded by {@link #FLUSH_STALL}. */
    private void publisherEnded() {
        queue.end();
        if (queue.usedBytes() > 0 && open.getAsBoolean()) {
            Thread.ofVirtual().name("stream-" + streamId + "-flush-watch").start(this::watchFlush);
        }
    }

    /**
     * Bounds the flush after EOF: while the upstream writer has not ended the request body, each {@link #FLUSH_STALL}
     * must see bytes written to the router; when one sees none, the stream is reset and reported
     * {@code upstream_closed} (the router was not reading; what it had not taken is dropped). The watchdog closes
     * the stream itself: the reset must be on the wire before the report, which a close on this thread ensures.
     */
    private void watchFlush() {
        long seen = -1;
        while (!requestEnded && open.getAsBoolean()) {
            long written = bytesToRouter.get();
            if (written == seen) {
                flushAbandoned = true;
                LOG.info("stream_flush_abandoned").field("stream_id", streamId)
                        .field("stalled_ms", FLUSH_STALL.toMillis()).field("queued_bytes", queue.usedBytes()).log();
                closer.close(Code.UPSTREAM_CLOSED); // the reset, then the report; the blocked write fails quietly
                return;
            }
            seen = written;
            try {
                Thread.sleep(FLUSH_STALL);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Publisher to router, part 2: hand queued chunks to the HTTP/2 stream in order. */
    private void pumpQueueToRouter() {
        ChunkQueue q = queue;
        BusStream s = stream;
        try {
            while (true) {
                // a writer that fell behind takes every queued chunk (up to 64 KiB) in one write
                ChunkQueue.Batch batch = q.takeBatch(READ_CHUNK_BYTES);
                if (batch == null) {
                    break;
                }
                try {
                    s.write(ByteBuffer.wrap(batch.bytes()));
                } finally {
                    q.written(batch);
                }
                bytesToRouter.addAndGet(batch.bytes().length);
                metrics.relayed(Direction.UPSTREAM_TO_ROUTER, batch.bytes().length);
            }
            if (q.isClosed() || !open.getAsBoolean()) {
                return;
            }
            requestEnded = true;
            s.endRequest();
            // Section 6, publisher EOF: the request body ended, the stream closes and stream_closed upstream_closed
            // goes out now, in that order, with no wait on the router (it leaves the table and max_streams here).
            closer.closeEnded(Code.UPSTREAM_CLOSED);
            // The HTTP/2 stream keeps its slot until the router ends its response, or END_GRACE passes and the
            // reset frees it (docs/protocol.md 8.1); the bytes reached the wire before END_STREAM either way.
            if (!s.awaitClosed(END_GRACE)) {
                s.cancel();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (TransportException e) {
            // Reset by the router, by the flush watchdog, or the connection died: closeAfter decides what to report.
            LOG.debug("stream_write_failed").field("stream_id", streamId).cause(e).log();
            closeAfter(e);
        }
    }

    /**
     * Router to publisher: the response head within 10 s of the slot grant (R-OPEN: the deadline includes any
     * wait inside the HTTP/2 client after the grant), then the body to the socket (section 6).
     */
    private void pumpRouterToPublisher() {
        BusStream s = stream;
        ResponseHead head;
        try {
            head = s.awaitResponseHead(responseHead.minusNanos(System.nanoTime() - s.slotGrantedNanos()));
        } catch (TimeoutException e) {
            closer.close(Code.IDLE_TIMEOUT);
            return;
        } catch (TransportException e) {
            closeAfter(e);
            return;
        }
        if (head.status() != 200) {
            // 404 unknown_stream (and any other refusal of the stream): reset, close, report nothing.
            LOG.debug("data_stream_rejected").field("stream_id", streamId).field("status", head.status()).log();
            closer.close(null);
            return;
        }
        try {
            while (true) {
                ByteBuffer chunk = s.read();
                if (chunk == null) {
                    if (requestEnded || !open.getAsBoolean()) {
                        return; // the router's end after the publisher's: the stream has closed both ways
                    }
                    // Router ended its body: half-close toward the publisher, keep relaying the other way.
                    socket.shutdownOutput();
                    watchUntilClosed(s);
                    return;
                }
                int n = chunk.remaining();
                writeToPublisher(chunk);
                s.release(n);
                bytesToPublisher.addAndGet(n);
                metrics.relayed(Direction.ROUTER_TO_UPSTREAM, n);
            }
        } catch (TransportException e) {
            // Router reset the stream (report nothing) or the connection died (the session ends). Once the
            // request body has ended, the upstream writer reports upstream_closed: a router's reset then only
            // released the stream.
            if (!requestEnded) {
                closeAfter(e);
            }
        } catch (IOException e) {
            // The publisher socket failed (section 6: a socket error, as EOF): flush what is queued, end the
            // request body and report upstream_closed. The reader may still get bytes a moment longer.
            publisherWriteFailed = true;
            if (open.getAsBoolean()) {
                LOG.debug("publisher_write_failed").field("stream_id", streamId).cause(e).log();
                publisherEnded();
            }
        }
    }

    /**
     * After the router ended its body, the stream's end is still to be seen here: a reset (the router's, or the
     * transport's own after a frame the stream did not allow) closes the stream at once, as it would a blocked
     * read. The upstream writer would see it only at the publisher's next bytes, which may never come.
     */
    private void watchUntilClosed(BusStream s) {
        try {
            while (!s.awaitClosed(WATCH_SLICE)) {
                // open: both halves of the publisher's stream may stay up for its whole life
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        TransportException failure = s.failure();
        if (failure != null && !requestEnded) {
            closeAfter(failure); // a normal end (END_STREAM both ways) is the upstream writer's to report
        }
    }

    /**
     * Closes the stream after a failure in the transport. It reports nothing for a reset by the router or a lost
     * connection (section 6; the session reports the latter), and {@code protocol_error} for a malformed response,
     * which the transport has answered with a reset of its own (docs/protocol.md 8.1). Either pump may see the
     * failure first, so both close through here.
     */
    private void closeAfter(TransportException failure) {
        if (flushAbandoned) {
            closer.close(Code.UPSTREAM_CLOSED); // the publisher ended; the reset was the flush watchdog's
            return;
        }
        if (ConnectionLostException.goingAway(failure)) {
            // above the router's GOAWAY last-stream-id: it never processed this stream, so it learns of the end here
            closer.close(Code.DRAINING);
            return;
        }
        boolean malformed = failure instanceof MalformedResponseException;
        if (closer.close(malformed ? Code.PROTOCOL_ERROR : null) && malformed) {
            LOG.warn("data_stream_malformed").field("stream_id", streamId).field("detail", failure.getMessage()).log();
        }
    }

    /**
     * Writes all of {@code bytes} to the non-blocking socket, waiting (through the readiness loop) while the
     * publisher's receive buffer is full.
     */
    private void writeToPublisher(ByteBuffer bytes) throws IOException {
        while (true) {
            channel.write(bytes);
            if (!bytes.hasRemaining()) {
                return;
            }
            SelectionKey k = key;
            if (k == null) {
                throw new ClosedChannelException(); // never registered: the session is ending
            }
            reads.awaitWritable(k);
        }
    }
}
