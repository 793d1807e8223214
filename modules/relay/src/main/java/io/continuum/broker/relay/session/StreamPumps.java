package io.continuum.broker.relay.session;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.api.RelayMetrics.Direction;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.ResponseHead;
import io.continuum.broker.relay.transport.TransportException;

/**
 * The bytes of one open data stream (bus-protocol-v1.md section 6; R-BUF 1-4), on three virtual threads: the
 * upstream reader (publisher socket to the {@link ChunkQueue}, never blocked), the upstream writer (queue to the
 * HTTP/2 stream) and the downstream pump (HTTP/2 stream to the publisher socket, window replenished only as bytes
 * reach the socket). How the bytes end decides how the stream closes; the closing itself is the stream's.
 */
final class StreamPumps {
    /** The stream's events keep one logger name, {@link DataStream}'s, as operators filter on it. */
    private static final EventLog LOG = EventLog.of(DataStream.class);
    /** Publisher sockets are read in large chunks; each chunk costs 64 bytes of budget. */
    static final int READ_CHUNK_BYTES = 64 * 1024;
    /** What an idle stream's publisher read waits with (see {@link #pumpPublisherToQueue}). */
    static final int IDLE_READ_BYTES = 2 * 1024;

    /** Ends the stream once; {@code code} null closes it without a {@code stream_closed}. */
    @FunctionalInterface
    interface Closer {
        boolean close(Code code);
    }

    private final long streamId;
    private final Socket socket;
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

    StreamPumps(long streamId, Socket socket, BusStream stream, ChunkQueue queue, RelayMetrics metrics,
                Duration responseHead, BooleanSupplier open, Closer closer) {
        this.streamId = streamId;
        this.socket = socket;
        this.stream = stream;
        this.queue = queue;
        this.metrics = metrics;
        this.responseHead = responseHead;
        this.open = open;
        this.closer = closer;
    }

    /** Starts the two upstream threads and runs the downstream pump on the calling one. */
    void run() {
        Thread.ofVirtual().name("stream-" + streamId + "-up-read").start(this::pumpPublisherToQueue);
        Thread.ofVirtual().name("stream-" + streamId + "-up-write").start(this::pumpQueueToRouter);
        pumpRouterToPublisher();
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
     * The read size of a busy stream: 64 KiB, but never more than a quarter of the stream's budget (less the
     * per-chunk charge), so one read of a burst cannot overflow a stream whose router keeps up: at the 16 KiB
     * minimum budget a 64 KiB read would be charged more than the whole budget at once (R-BUF 1, 3).
     */
    static int busyReadBytes(int streamBudgetBytes) {
        int quarter = (streamBudgetBytes - ChunkQueue.CHUNK_OVERHEAD_BYTES) / 4;
        return Math.clamp(quarter, IDLE_READ_BYTES, READ_CHUNK_BYTES);
    }

    /** Publisher to router, part 1: read the socket continuously, never back-pressured (R-BUF 4). */
    private void pumpPublisherToQueue() {
        ChunkQueue q = queue;
        long nearBudgetBytes = (long) q.limitBytes() * RelayMetrics.NEAR_BUDGET_PERCENT / 100;
        boolean nearBudget = false;
        // An idle stream waits in read() with a small buffer; a read that fills it switches to the 64 KiB one
        // until a read returns less than the small size again. The socket is read just as continuously, and
        // an idle stream holds 2 KiB instead of 64 KiB (1,000 idle streams: 62 MiB less heap).
        byte[] idle = new byte[IDLE_READ_BYTES];
        byte[] busy = null;
        try {
            InputStream in = socket.getInputStream();
            while (true) {
                byte[] buf = busy != null ? busy : idle;
                int n = in.read(buf);
                if (n < 0) {
                    break;
                }
                if (n == 0) {
                    continue;
                }
                if (!q.offer(Arrays.copyOf(buf, n))) {
                    // A queue ended by a failed write toward the publisher refuses offers too: that is the
                    // socket error ending the stream (upstream_closed, by the writer), not an overflow.
                    if (open.getAsBoolean() && !publisherWriteFailed) {
                        closer.close(Code.BUFFER_OVERFLOW);
                    }
                    return;
                }
                if (!nearBudget && q.usedBytes() >= nearBudgetBytes) {
                    nearBudget = true;
                    metrics.streamNearBudget();
                }
                if (busy == null && n == buf.length) {
                    busy = new byte[busyReadBytes(q.limitBytes())];
                } else if (busy != null && n < IDLE_READ_BYTES) {
                    busy = null;
                }
            }
        } catch (IOException e) {
            if (!open.getAsBoolean()) {
                return;
            }
            LOG.debug("publisher_read_failed").field("stream_id", streamId).cause(e).log();
        }
        // EOF or socket error: flush what is queued, end the request body, report upstream_closed.
        q.end();
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
            // Section 6, publisher EOF. The request body is complete; a router ends its response once it has read
            // the body up to END_STREAM. That end is awaited (bounded) before any reset, because HTTP/2 servers
            // may drop request DATA their application has not read yet when RST_STREAM arrives (Helidon 4.5.0's
            // does). Meanwhile the stream keeps its place in the table and its HTTP/2 slot, so stream_closed is
            // only sent once both are free.
            s.awaitClosed(responseHead);
            closer.close(Code.UPSTREAM_CLOSED);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (TransportException e) {
            // Reset by the router, or the connection died: the downstream pump decides what to report.
            LOG.debug("stream_write_failed").field("stream_id", streamId).cause(e).log();
            closer.close(null);
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
            closer.close(null);
            return;
        }
        if (head.status() != 200) {
            // 404 unknown_stream (and any other refusal of the stream): reset, close, report nothing.
            LOG.debug("data_stream_rejected").field("stream_id", streamId).field("status", head.status()).log();
            closer.close(null);
            return;
        }
        try {
            OutputStream out = socket.getOutputStream();
            while (true) {
                ByteBuffer chunk = s.read();
                if (chunk == null) {
                    // Router ended its body: half-close toward the publisher, keep relaying the other way.
                    socket.shutdownOutput();
                    return;
                }
                int n = chunk.remaining();
                if (chunk.hasArray()) {
                    out.write(chunk.array(), chunk.arrayOffset() + chunk.position(), n);
                } else {
                    byte[] copy = new byte[n];
                    chunk.get(copy);
                    out.write(copy);
                }
                out.flush();
                s.release(n);
                bytesToPublisher.addAndGet(n);
                metrics.relayed(Direction.ROUTER_TO_UPSTREAM, n);
            }
        } catch (TransportException e) {
            // Router reset the stream (report nothing) or the connection died (the session ends). Once the
            // request body has ended, the upstream writer reports upstream_closed: a router's reset then only
            // released the stream.
            if (!requestEnded) {
                closer.close(null);
            }
        } catch (IOException e) {
            // The publisher socket failed (section 6: a socket error, as EOF): flush what is queued, end the
            // request body and report upstream_closed. The reader may still get bytes a moment longer.
            publisherWriteFailed = true;
            if (open.getAsBoolean()) {
                LOG.debug("publisher_write_failed").field("stream_id", streamId).cause(e).log();
            }
            queue.end();
        }
    }
}
