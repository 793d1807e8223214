package io.continuum.broker.relay.stream;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import io.continuum.broker.event.EventLog;

/**
 * One session's readiness loop over its publisher sockets (R-BUF 4: every publisher socket is read continuously,
 * never back-pressured by the router). One platform thread, {@code publisher-reads-<session>}, waits in
 * {@link Selector#select} on every open stream's socket, reads each ready one once per round into one buffer, and
 * hands the bytes to the stream's {@link Sink}: its queue, or, when the stream's writer is idle and the router's
 * windows are open, the HTTP/2 connection itself; what a round added goes out in one socket write at its end (or
 * every 64 KiB), on this thread.
 *
 * <p>Why the loop writes: a message read here and written by the stream's writer costs two wake-ups (this thread,
 * then the writer's carrier); written here, one, as in a TLS tunnel such as stunnel (docs/benchmarks.md, "One
 * wake-up per message"). A platform thread, because a virtual one in {@code select} is woken through the JDK's
 * poller, a wake-up more.
 *
 * <p>Why that cannot back-pressure the publishers: adding never waits for the router's windows
 * ({@link io.continuum.broker.relay.transport.BusStream#tryAdd}), but the round's write may wait for the TCP socket
 * when the router reads slower than its windows allow. A watchdog bounds that: when one chunk's hand-over has taken longer
 * than {@link #STALL}, it gives the loop to a new thread, which reads on and queues every chunk (no write of its
 * own) until the stalled write returns; the stalled thread then leaves without touching the selector.
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
    /**
     * How long one chunk's hand-over to its sink may take before the loop moves to a new thread: long against a
     * TLS write of 64 KiB that finds room in the socket (tens of microseconds), short against what a publisher's
     * socket buffer and ZMQ's high-water mark absorb while nothing reads it.
     */
    static final Duration STALL = Duration.ofMillis(10);

    /** What the loop calls for one socket, on the loop's thread. Each call must return without blocking. */
    interface Sink {
        /** @return how many bytes the next read may take (R-BUF 1, 3: see {@link StreamPumps#readBytes}) */
        int readBytes();

        /**
         * Takes one read's bytes. When {@code mayWrite} it may add them to the connection's next write itself,
         * without waiting for windows; it must not block.
         *
         * @param bytes    what was read, from position to limit, in the loop's buffer: valid only during the call,
         *                 so the sink copies what it keeps (a chunk it adds to the next write is copied there, and
         *                 only a queued one into an array of its own)
         * @param mayWrite whether the sink may write the bytes on this thread (false while an earlier write stalls)
         * @return what the sink did with them
         */
        Taken chunk(ByteBuffer bytes, boolean mayWrite);

        /**
         * Writes to the router what this round added ({@link Taken#ADDED}), every stream's: any sink of the
         * session's connection may be asked. It may wait for the socket, which the loop bounds ({@link #STALL}).
         */
        void flush();

        /**
         * The socket's bytes ended: {@code failure} null at EOF, else the read's error. No call follows.
         *
         * @param failure the read's error, or null at EOF
         */
        void ended(IOException failure);
    }

    /** What a {@link Sink} did with a chunk. */
    enum Taken {
        /** Added to the connection's next write on the loop's thread: the loop flushes before it selects again. */
        ADDED,
        /** Queued for the stream's writer (the loop yields to it before its next round). */
        QUEUED,
        /** Refused: the stream takes no more bytes (closing), so the socket is no longer read. */
        CLOSED
    }

    /** What the loop keeps per socket: the sink, and the downstream writer waiting for the socket to drain. */
    private static final class Registration {
        final Sink sink;
        volatile Thread waitingWriter;

        Registration(Sink sink) {
            this.sink = sink;
        }
    }

    /**
     * One thread's turn at the loop. {@link #state} moves RUNNING to IN_SINK and back around each hand-over to a
     * sink; the watchdog takes a hand-over that stalled (IN_SINK to TAKEN) and starts the next turn. A compare and
     * set decides each race, so exactly one thread selects at a time.
     */
    private static final class Turn {
        static final int RUNNING = 0;
        static final int IN_SINK = 1;
        static final int TAKEN = 2;
        final AtomicInteger state = new AtomicInteger(RUNNING);
        /** Hand-overs begun in this turn: the watchdog sees a stall as the same one in flight on two looks. */
        volatile long handOvers;
    }

    private final Supplier<String> sessionId;
    private final Object startLock = new Object();
    /** Opened with the loop's thread, by the first {@link #register}: a session without streams has neither. */
    private volatile Selector selector;
    private Thread thread;
    private volatile Turn turn;
    /** Set while a hand-over the watchdog took is still under way: the loop queues every chunk meanwhile. */
    private volatile boolean stalled;
    private Thread watchdog;
    /** Whether the watchdog parks until the loop's next hand-over (no traffic: no periodic wake-ups). */
    private volatile boolean watchdogIdle;
    /** How often the loop moved in this session: the watchdog's alone. */
    private long moves;
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
                startTurn(this.selector);
                Selector s = this.selector;
                watchdog = Thread.ofVirtual().name("publisher-reads-watch-" + sessionId.get())
                        .start(() -> watch(s));
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
        Thread w;
        synchronized (startLock) {
            w = watchdog;
        }
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /** Starts a turn of the loop on a new platform thread. Under startLock, or before any other thread knows. */
    private void startTurn(Selector s) {
        Turn t = new Turn();
        turn = t;
        thread = Thread.ofPlatform().daemon().name("publisher-reads-" + sessionId.get()).start(() -> run(s, t));
    }

    /**
     * The watchdog: every {@link #STALL} while hand-overs happen, it looks whether the one in flight is the one it
     * saw last time; if so, that hand-over has stalled and the loop moves on without it. Parked while the loop
     * hands nothing over.
     */
    private void watch(Selector s) {
        Turn seenTurn = null;
        long seen = -1;
        while (!closed) {
            Turn t = turn;
            long n = t.handOvers;
            if (t == seenTurn && n == seen) {
                if (t.state.get() == Turn.IN_SINK) {
                    if (t.state.compareAndSet(Turn.IN_SINK, Turn.TAKEN)) {
                        stalled = true; // before the next turn reads: it queues every chunk
                        moves++;
                        if ((moves & (moves - 1)) == 0) { // 1st, 2nd, 4th, 8th...: a router far behind floods no log
                            LOG.info("publisher_reads_moved").field("session_id", sessionId.get())
                                    .field("stalled_ms", STALL.toMillis()).field("moves", moves).log();
                        }
                        synchronized (startLock) {
                            if (!closed) {
                                startTurn(s);
                            }
                        }
                    }
                    seenTurn = null;
                    continue;
                }
                // nothing handed over since the last look: sleep until the loop's next hand-over
                watchdogIdle = true;
                if (t.handOvers == n && !closed) {
                    LockSupport.park(this);
                }
                watchdogIdle = false;
                seenTurn = null;
                continue;
            }
            seenTurn = t;
            seen = n;
            LockSupport.parkNanos(this, STALL.toNanos());
        }
    }

    private void run(Selector selector, Turn turn) {
        // One buffer for every socket, so a stream holds no read buffer of its own (an idle stream costs nothing
        // here): a read the sink adds to the connection's next write is copied there from this buffer, and only one
        // it queues into an array of exactly its length. Each turn has its own: a thread the watchdog left behind
        // may still be handing over from the old one.
        ByteBuffer buffer = ByteBuffer.allocateDirect(StreamPumps.READ_CHUNK_BYTES);
        try {
            while (!closed) {
                selector.select();
                boolean queued = false;
                Sink added = null; // a sink of the connection with bytes added this round, to flush them
                long unflushed = 0;
                Iterator<SelectionKey> ready = selector.selectedKeys().iterator();
                while (ready.hasNext()) {
                    SelectionKey key = ready.next();
                    ready.remove();
                    int n = ready(key, buffer, turn);
                    if (n == LEFT) {
                        // The loop is another thread's now. What this round added still goes out (the move was
                        // spurious if this thread was only kept off the CPU), then the new turn may write again.
                        ((Registration) key.attachment()).sink.flush();
                        stalled = false;
                        return;
                    }
                    queued |= n == QUEUED;
                    if (n > 0) {
                        added = ((Registration) key.attachment()).sink;
                        unflushed += n;
                    }
                    if (added != null && (unflushed >= StreamPumps.READ_CHUNK_BYTES || !ready.hasNext())) {
                        // one socket write for the round's bytes, or for each 64 KiB of them
                        beginHandOver(turn);
                        added.flush();
                        if (!endHandOver(turn)) {
                            stalled = false; // the flush that stalled returned; the loop is another thread's now
                            return;
                        }
                        added = null;
                        unflushed = 0;
                    }
                }
                if (queued) {
                    // Paced against the writers: the streams this round queued bytes for have their writers
                    // runnable now, and the yield lets them run before the next round reads more. A loop that ran
                    // on while they waited for the CPU would fill every stream's queue faster than one core
                    // empties them, and the budgets would overflow together; this way a saturated core leaves the
                    // backlog in the kernel's socket buffers. A writer waiting for the router (window, socket) is
                    // not runnable, so its stream is still read on every round (R-BUF 4).
                    Thread.yield();
                }
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
        }
        try {
            selector.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    // What one ready socket's turn did (ready's result): the bytes added to the connection's next write (> 0),
    // nothing for a writer, a chunk queued for one, or the loop left (the watchdog took it).
    private static final int DONE = 0;
    private static final int QUEUED = -1;
    private static final int LEFT = -2;

    /** A hand-over to a sink begins: the watchdog sees it in flight. Only the turn's thread calls it. */
    private void beginHandOver(Turn turn) {
        turn.handOvers++;
        turn.state.set(Turn.IN_SINK);
        if (watchdogIdle) {
            LockSupport.unpark(watchdog); // traffic again: the watchdog looks every STALL while it flows
        }
    }

    /** @return false when the watchdog gave the loop to another thread meanwhile: this thread must leave it */
    private static boolean endHandOver(Turn turn) {
        return turn.state.compareAndSet(Turn.IN_SINK, Turn.RUNNING);
    }

    private int ready(SelectionKey key, ByteBuffer buffer, Turn turn) {
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
                return DONE;
            }
            SocketChannel channel = (SocketChannel) key.channel();
            buffer.clear().limit(r.sink.readBytes());
            int n;
            try {
                n = channel.read(buffer);
            } catch (IOException e) {
                key.interestOpsAnd(~SelectionKey.OP_READ);
                r.sink.ended(e);
                return DONE;
            }
            if (n < 0) {
                // EOF: no more reads, but the key stays while the socket is open, for the downstream writer
                key.interestOpsAnd(~SelectionKey.OP_READ);
                r.sink.ended(null);
                return DONE;
            }
            if (n == 0) {
                return DONE;
            }
            buffer.flip();
            boolean mayWrite = !stalled;
            beginHandOver(turn);
            Taken taken;
            RuntimeException failure = null;
            try {
                taken = r.sink.chunk(buffer, mayWrite);
            } catch (RuntimeException e) {
                taken = Taken.CLOSED;
                failure = e;
            }
            if (!endHandOver(turn)) {
                return LEFT; // the watchdog gave the loop to another thread meanwhile
            }
            if (failure != null) {
                throw failure;
            }
            if (taken == Taken.CLOSED) {
                key.interestOpsAnd(~SelectionKey.OP_READ);
            }
            return switch (taken) {
                case ADDED -> n;
                case QUEUED -> QUEUED;
                case CLOSED -> DONE;
            };
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
        return DONE;
    }
}
