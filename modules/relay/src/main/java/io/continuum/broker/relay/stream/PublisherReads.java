package io.continuum.broker.relay.stream;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import io.continuum.broker.event.EventLog;

/**
 * One session's readiness loop over its publisher sockets (R-BUF 4: every publisher socket is read continuously,
 * never back-pressured by the router). One virtual thread, {@code publisher-reads-<session>}, waits in
 * {@link Selector#select} on every open stream's socket, reads each ready one once per round into one buffer, and
 * hands the bytes to the stream's {@link Sink} (its queue), which never blocks.
 *
 * <p>Why one loop and not one blocked virtual thread per socket: a virtual thread's blocking read costs, per
 * message of a publisher that sends a few hundred small messages a second, a read that finds nothing, a one-shot
 * poller registration, a park and an unpark, then the read. The loop's registration stays, and one {@code select}
 * serves every socket that became ready meanwhile (docs/benchmarks.md, the Dynamo-shaped load).
 *
 * <p>The loop also tells a stream's downstream writer when its socket takes bytes again ({@link #awaitWritable}):
 * the sockets are non-blocking, because a channel a selector waits on must be.
 */
public final class PublisherReads implements AutoCloseable {
    private static final EventLog LOG = EventLog.of(DataStream.class);

    /** What the loop calls for one socket, on the loop's thread. Each call must return without blocking. */
    interface Sink {
        /** @return how many bytes the next read may take (R-BUF 1, 3: see {@link StreamPumps#readBytes}) */
        int readBytes();

        /**
         * @param chunk bytes read, owned by the sink from now on
         * @return false when the stream takes no more bytes (closing): the socket is no longer read
         */
        boolean chunk(byte[] chunk);

        /**
         * The socket's bytes ended: {@code failure} null at EOF, else the read's error. No call follows.
         *
         * @param failure the read's error, or null at EOF
         */
        void ended(IOException failure);
    }

    /** What the loop keeps per socket: the sink, and the downstream writer waiting for the socket to drain. */
    private static final class Registration {
        final Sink sink;
        volatile Thread waitingWriter;

        Registration(Sink sink) {
            this.sink = sink;
        }
    }

    private final Supplier<String> sessionId;
    private final Object startLock = new Object();
    /** Opened with the loop's thread, by the first {@link #register}: a session without streams has neither. */
    private volatile Selector selector;
    private Thread thread;
    private volatile boolean closed;

    /**
     * @param sessionId the session's id (known once welcomed, before any stream), for the thread's name and events
     */
    public PublisherReads(Supplier<String> sessionId) {
        this.sessionId = sessionId;
    }

    /**
     * Starts reading {@code channel} for {@code sink} (the loop's thread starts with the first socket).
     *
     * @param channel a connected socket channel, switched to non-blocking mode here
     * @param sink    where its bytes go
     * @return the socket's key, for {@link #awaitWritable} and {@link #wakeup}
     * @throws IOException when the channel is closed, or the session's loop is
     */
    SelectionKey register(SocketChannel channel, Sink sink) throws IOException {
        Selector selector;
        synchronized (startLock) {
            if (closed) {
                throw new ClosedChannelException();
            }
            if (thread == null) {
                this.selector = Selector.open();
                Selector s = this.selector;
                // A virtual thread, on the carriers the stream writers run on: see run()
                thread = Thread.ofVirtual().name("publisher-reads-" + sessionId.get()).start(() -> run(s));
            }
            selector = this.selector;
        }
        channel.configureBlocking(false);
        try {
            // registration takes effect at the selector's next round: woken at once
            return channel.register(selector, SelectionKey.OP_READ, new Registration(sink));
        } catch (ClosedSelectorException e) {
            throw new ClosedChannelException();
        } finally {
            selector.wakeup();
        }
    }

    /**
     * Waits until the socket of {@code key} takes bytes again, or is closed. For the downstream writer, whose
     * non-blocking write wrote nothing. Rare: the publisher stopped reading, and its receive buffer is full.
     *
     * @param key what {@link #register} returned
     */
    void awaitWritable(SelectionKey key) {
        Registration r = (Registration) key.attachment();
        r.waitingWriter = Thread.currentThread();
        try {
            key.interestOpsOr(SelectionKey.OP_WRITE);
            key.selector().wakeup();
            // The loop clears OP_WRITE before it unparks; a socket closed meanwhile cancels the key, and whoever
            // closes it wakes this writer (wakeup) or the next round's check sees it: the park is bounded anyway.
            while ((key.interestOps() & SelectionKey.OP_WRITE) != 0 && key.channel().isOpen()) {
                LockSupport.parkNanos(this, 100_000_000L);
            }
        } catch (CancelledKeyException e) {
            // closed meanwhile: the write that follows fails and says so
        } finally {
            r.waitingWriter = null;
        }
    }

    /**
     * After a registered socket was closed: the loop's next round releases it (a channel registered with a
     * selector is only fully closed once the selector has seen its key cancelled), and a writer waiting for it
     * wakes up.
     *
     * @param key what {@link #register} returned
     */
    void wakeup(SelectionKey key) {
        Thread waiting = ((Registration) key.attachment()).waitingWriter;
        if (waiting != null) {
            LockSupport.unpark(waiting);
        }
        key.selector().wakeup();
    }

    /** Stops the loop and closes the selector; the sockets are their streams' to close. Idempotent. */
    @Override
    public void close() {
        Selector s;
        synchronized (startLock) {
            closed = true;
            s = selector;
        }
        if (s != null) {
            s.wakeup(); // the loop closes it as it leaves
        }
    }

    private void run(Selector selector) {
        // One buffer for every socket: each read is copied into a chunk of exactly its length, so a stream holds
        // no read buffer of its own (an idle stream costs nothing here).
        ByteBuffer buffer = ByteBuffer.allocateDirect(StreamPumps.READ_CHUNK_BYTES);
        try {
            while (!closed) {
                selector.select(key -> ready(key, buffer));
                // Paced against the writers: the streams this round handed bytes to have their writers runnable
                // now, and the yield lets them run before the next round reads more. A loop that ran on while they
                // waited for the CPU would fill every stream's queue faster than one core empties them, and the
                // budgets would overflow together; this way a saturated core leaves the backlog in the kernel's
                // socket buffers, as one blocked reader per socket did. A writer waiting for the router (window,
                // socket) is not runnable, so its stream is still read on every round (R-BUF 4).
                Thread.yield();
            }
        } catch (IOException | ClosedSelectorException e) {
            if (!closed) {
                // Not expected (epoll failed): every stream still read ends as on a read error (upstream_closed)
                // rather than stalling unnoticed; new streams of this session fail to register.
                LOG.warn("publisher_reads_failed").field("session_id", sessionId.get()).cause(e).log();
                synchronized (startLock) {
                    closed = true;
                }
                IOException failure = e instanceof IOException io ? io : new IOException(e);
                for (SelectionKey key : selector.keys()) {
                    try {
                        if ((key.interestOps() & SelectionKey.OP_READ) != 0) {
                            ((Registration) key.attachment()).sink.ended(failure);
                        }
                    } catch (RuntimeException ignored) {
                        // closed meanwhile, or nothing left to end
                    }
                }
            }
        } finally {
            try {
                selector.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    private void ready(SelectionKey key, ByteBuffer buffer) {
        Registration r = (Registration) key.attachment();
        try {
            if (key.isWritable()) {
                key.interestOpsAnd(~SelectionKey.OP_WRITE);
                Thread waiting = r.waitingWriter;
                if (waiting != null) {
                    LockSupport.unpark(waiting);
                }
            }
            if (!key.isReadable()) {
                return;
            }
            SocketChannel channel = (SocketChannel) key.channel();
            buffer.clear().limit(r.sink.readBytes());
            int n;
            try {
                n = channel.read(buffer);
            } catch (IOException e) {
                key.interestOpsAnd(~SelectionKey.OP_READ);
                r.sink.ended(e);
                return;
            }
            if (n < 0) {
                // EOF: no more reads, but the key stays while the socket is open, for the downstream writer
                key.interestOpsAnd(~SelectionKey.OP_READ);
                r.sink.ended(null);
                return;
            }
            if (n == 0) {
                return;
            }
            byte[] chunk = new byte[n];
            buffer.flip().get(chunk);
            if (!r.sink.chunk(chunk)) {
                key.interestOpsAnd(~SelectionKey.OP_READ);
            }
        } catch (CancelledKeyException e) {
            // the stream closed its socket meanwhile
        } catch (RuntimeException e) {
            // A sink's bug must not stop every other stream's reads: this socket is no longer read, and its stream
            // ends as its other halves notice (the router's reset, the session's end).
            LOG.error("publisher_read_sink_failed").field("session_id", sessionId.get()).cause(e).log();
            try {
                key.interestOpsAnd(~SelectionKey.OP_READ);
            } catch (CancelledKeyException ignored) {
                // closed meanwhile
            }
        }
    }
}
