package io.continuum.broker.relay.transport;

import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.helidon.common.buffers.BufferData;
import io.helidon.http.http2.Http2ErrorCode;
import io.helidon.http.http2.Http2Flag;
import io.helidon.http.http2.Http2FrameData;
import io.helidon.http.http2.Http2RstStream;
import io.helidon.webclient.http2.StreamTimeoutException;

/**
 * One bus stream on a {@link HelidonBusConnection}. State and windows are guarded by the connection's lock
 * ({@link #changed} is a condition of it); one writer at a time per stream ({@link #writeLock}). The receive
 * window's arithmetic is {@link StreamReceiveWindow}'s, header conversion {@link HelidonHeaders}'.
 *
 * <p>Longer than the project's 400-line aim on purpose: it is one stream's state machine ({@link StreamState}),
 * and every public operation (write, end, read, release, cancel) and every event from the reader thread (DATA,
 * HEADERS, RST_STREAM, connection loss) reads and changes the same state, failure and windows under one lock and
 * one condition. Split into a write half and a read half, each would reach into the other's fields under the
 * other's lock, and the orderings that matter here (no DATA after our RST_STREAM, the slot freed only behind the
 * stream's last frame, the window credited back exactly once) would no longer be visible in one place.
 */
final class HelidonBusStream implements BusStream {
    private final HelidonBusConnection connection;
    private final BusClientStream helidon;
    private final int id;
    private final ReentrantLock lock;
    private final Condition changed;
    private final ReentrantLock writeLock = new ReentrantLock();
    private final ReentrantLock readLock = new ReentrantLock();
    /**
     * Most bytes taken from the windows and written in one go, as several DATA frames in one socket write
     * (fewer lock rounds and TLS writes per chunk; a 64 KiB publisher read is one write, not four).
     */
    static final int WRITE_BATCH = 4 * Http2Frames.MAX_FRAME_PAYLOAD;
    /** Only for direct buffers; heap buffers are framed from their own array. Guarded by writeLock. */
    private byte[] frameBuffer;

    // guarded by lock
    private StreamState state = StreamState.OPEN;
    private TransportException failure;
    private long sendWindow;
    private final StreamReceiveWindow receive;
    private boolean headSeen;
    private boolean headEndsStream;
    private ResponseHead head;

    private final long slotGrantedNanos;

    // written by the reader (readLock), read by endRequest
    private volatile boolean readerDone;

    // set before our RST_STREAM is written; checked under the frame writer's lock before each DATA frame
    private volatile boolean resetSent;

    /**
     * Test seam: runs on the cancelling thread right after this stream's RST_STREAM is on the wire, so a test can
     * make the peer's frames for the stream arrive exactly then (a black-box race cannot hit that window).
     */
    volatile Runnable afterResetWritten;

    HelidonBusStream(HelidonBusConnection connection, BusClientStream helidon, int id, long peerInitialWindow,
                     long slotGrantedNanos) {
        this.connection = connection;
        this.slotGrantedNanos = slotGrantedNanos;
        this.helidon = helidon;
        this.id = id;
        this.lock = connection.lock;
        this.changed = lock.newCondition();
        this.sendWindow = peerInitialWindow;
        this.receive = new StreamReceiveWindow(connection.settings().streamWindowUpdateThreshold());
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public long slotGrantedNanos() {
        return slotGrantedNanos;
    }

    int idInt() {
        return id;
    }

    /** @return DATA payload bytes the peer has sent on this stream so far (for tests and metrics) */
    long receivedBytes() {
        lock.lock();
        try {
            return receive.received();
        } finally {
            lock.unlock();
        }
    }

    /** @return the state (for tests) */
    StreamState state() {
        lock.lock();
        try {
            return state;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void write(ByteBuffer data) throws TransportException {
        writeLock.lock();
        try {
            while (data.hasRemaining()) {
                int n;
                lock.lock();
                try {
                    while (true) {
                        throwIfNotWritableLocked();
                        n = (int) Math.min(Math.min(data.remaining(), WRITE_BATCH),
                                Math.min(connection.sendWindowLocked(), sendWindow));
                        if (n > 0) {
                            break;
                        }
                        // wait for the window without holding other streams back, and without a timeout
                        changed.await();
                    }
                    connection.consumeSendWindowLocked(n);
                    sendWindow -= n;
                } finally {
                    lock.unlock();
                }
                if (data.hasArray()) {
                    // framed straight from the caller's array into the writer's buffer: one copy, one socket write
                    int offset = data.arrayOffset() + data.position();
                    data.position(data.position() + n);
                    writeData(data.array(), offset, n);
                } else {
                    if (frameBuffer == null) {
                        frameBuffer = new byte[WRITE_BATCH];
                    }
                    data.get(frameBuffer, 0, n);
                    writeData(frameBuffer, 0, n);
                }
                // keep Helidon's connection-level outbound accounting in step with what was sent, so its overflow
                // check on the peer's connection WINDOW_UPDATEs only ever sees windows the peer really granted
                helidon.flowControl().outbound().decrementWindowSize(n);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StreamClosedException("interrupted while writing stream " + id);
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public void endRequest() throws TransportException {
        writeLock.lock();
        try {
            boolean finished;
            lock.lock();
            try {
                if (failure != null) {
                    throw failure;
                }
                if (!state.localOpen()) {
                    return;
                }
                state = state.onLocalEnd();
                finished = state.terminal();
                if (finished) {
                    connection.streamForgottenLocked(this);
                    changed.signalAll(); // awaitClosed
                }
            } finally {
                lock.unlock();
            }
            try {
                writeFrame(Http2Frames.dataHeader(id, 0, true), null, 0, 0);
            } finally {
                if (finished) {
                    connection.releaseSlot(); // behind our END_STREAM, which is what frees the slot for the peer
                }
            }
            releaseHelidonStreamIfDone();
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public ResponseHead awaitResponseHead(Duration timeout) throws TimeoutException, TransportException {
        long nanos = timeout.toNanos();
        lock.lock();
        try {
            while (!headSeen) {
                if (failure != null) {
                    throw failure;
                }
                if (nanos <= 0) {
                    throw new TimeoutException("no response head on stream " + id + " within " + timeout.toMillis()
                            + " ms");
                }
                nanos = changed.awaitNanos(nanos);
            }
            if (head != null) {
                return head;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StreamClosedException("interrupted while waiting for the response head of stream " + id);
        } finally {
            lock.unlock();
        }
        // the HEADERS frame has arrived; Helidon's reader thread decodes it right behind the sniffer
        ResponseHead decoded;
        try {
            decoded = HelidonHeaders.responseHead(helidon.readHeaders());
        } catch (RuntimeException e) {
            throw failureOr("response head of stream " + id + " could not be read");
        }
        lock.lock();
        try {
            head = decoded;
            return head;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public ByteBuffer read() throws TransportException {
        readLock.lock();
        try {
            if (readerDone) {
                return null;
            }
            lock.lock();
            try {
                while (!headSeen && failure == null) {
                    changed.await();
                }
                if (failure != null) {
                    throw failure;
                }
                if (headEndsStream) {
                    readerDone = true;
                }
            } finally {
                lock.unlock();
            }
            if (readerDone) {
                releaseHelidonStreamIfDone();
                return null;
            }
            Duration slice = connection.settings().readPollSlice();
            while (true) {
                throwIfFailed();
                Http2FrameData frame;
                try {
                    frame = helidon.readOne(slice);
                } catch (StreamTimeoutException e) {
                    continue;
                } catch (RuntimeException e) {
                    throw failureOr("reading stream " + id + " failed");
                }
                if (frame == null) {
                    if (helidon.trailers().isDone()) {
                        readerDone = true;
                        releaseHelidonStreamIfDone();
                        return null;
                    }
                    continue;
                }
                boolean end = (frame.header().flags() & Http2Flag.END_OF_STREAM) != 0;
                BufferData data = frame.data();
                byte[] bytes = new byte[data.available()];
                data.read(bytes);
                if (end) {
                    readerDone = true;
                    releaseHelidonStreamIfDone();
                    if (bytes.length == 0) {
                        return null;
                    }
                }
                if (bytes.length > 0) {
                    return ByteBuffer.wrap(bytes);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StreamClosedException("interrupted while reading stream " + id);
        } finally {
            readLock.unlock();
        }
    }

    @Override
    public void release(int n) {
        if (n <= 0) {
            throw new IllegalArgumentException("release needs a positive byte count");
        }
        int streamIncrement;
        int connectionIncrement;
        lock.lock();
        try {
            if (receive.creditReturned()) {
                return; // the stream ended abnormally and its bytes were credited to the connection already
            }
            streamIncrement = receive.release(n, state.remoteOpen());
            connectionIncrement = connection.creditConnectionLocked(n);
        } finally {
            lock.unlock();
        }
        connection.sendWindowUpdate(id, streamIncrement);
        connection.sendWindowUpdate(0, connectionIncrement);
    }

    @Override
    public boolean awaitClosed(Duration timeout) throws InterruptedException {
        long nanos = timeout.toNanos();
        lock.lock();
        try {
            while (!state.terminal()) {
                if (nanos <= 0) {
                    return false;
                }
                nanos = changed.awaitNanos(nanos);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void cancel() {
        reset(new StreamResetException(id, StreamResetException.CANCEL, false), StreamResetException.CANCEL);
    }

    /**
     * The peer sent DATA this stream does not allow ({@code verdict}): a stream error, answered with a reset. The
     * frame never reached Helidon (see {@link InboundFrameSniffer}); every later frame for the stream is ignored, as
     * after {@link #cancel()}.
     */
    void resetMalformedResponse(DataVerdict verdict) {
        reset(new MalformedResponseException(id, verdict.violation(), verdict.resetCode()), verdict.resetCode());
    }

    /** A reset by this side: {@code cause} is what every later call on the stream throws. */
    private void reset(TransportException cause, long errorCode) {
        boolean sendReset;
        boolean releaseSlot;
        int connectionIncrement;
        lock.lock();
        try {
            if (state == StreamState.RESET || state == StreamState.LOST) {
                return;
            }
            sendReset = state != StreamState.CLOSED;
            releaseSlot = !state.terminal();
            failure = cause;
            state = StreamState.RESET;
            resetSent = true;
            connectionIncrement = returnCreditLocked();
            if (releaseSlot) {
                connection.streamForgottenLocked(this); // DATA that still arrives is credited to the connection
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        // Helidon forgets the stream before the peer can learn of the reset. Its reader then drops the peer's
        // late frames for it (still HPACK-decoding header blocks, RFC 9113 5.4.2). Helidon's own cancel() would
        // mark its stream CLOSED first and remove it only later: a DATA with END_STREAM or a HEADERS block read
        // in between is a stream-state violation to Helidon, which then tears the whole connection down.
        helidon.close();
        try {
            if (sendReset) {
                try {
                    connection.writer().writeOwnFrame(Http2Frames.rstStream(id, (int) errorCode));
                } catch (UncheckedIOException e) {
                    // the connection is failing; fail() reports it
                }
                Runnable hook = afterResetWritten;
                if (hook != null) {
                    hook.run();
                }
            }
            wakeHelidonReader(); // Helidon's cancel does not wake the stream's reader: nothing else would
        } finally {
            if (releaseSlot) {
                connection.releaseSlot(); // behind our RST_STREAM: see releaseSlot()
            }
        }
        connection.sendWindowUpdate(0, connectionIncrement);
    }

    @Override
    public String toString() {
        return "BusStream[" + id + "]";
    }

    // ---------------------------------------------------------------------------------------------------------
    // events from the connection (lock held)

    void signalLocked() {
        changed.signalAll();
    }

    void adjustSendWindowLocked(long delta) {
        sendWindow += delta;
        changed.signalAll();
    }

    /** @return false if the peer overran this stream's receive window */
    boolean receivedLocked(int length, boolean endStream) {
        boolean within = receive.received(length);
        if (endStream) {
            remoteEndLocked();
        }
        return within;
    }

    /** @return what becomes of DATA from the peer on this stream now (it is in the connection's table) */
    DataVerdict dataVerdictLocked() {
        if (state.terminal()) {
            return DataVerdict.IGNORE;
        }
        if (!headSeen) {
            return DataVerdict.BEFORE_HEADERS;
        }
        return state.remoteOpen() ? DataVerdict.PASS : DataVerdict.AFTER_END_STREAM;
    }

    @Override
    public TransportException failure() {
        lock.lock();
        try {
            return failure;
        } finally {
            lock.unlock();
        }
    }

    void headersLocked(boolean endStream) {
        if (!headSeen) {
            headSeen = true;
            headEndsStream = endStream;
        }
        if (endStream) {
            remoteEndLocked();
        }
        changed.signalAll();
    }

    /** @return whether the stream was live and is now reset (the caller wakes the reader outside the lock) */
    boolean resetByPeerLocked(long errorCode) {
        if (state.terminal() && state != StreamState.CLOSED) {
            return false;
        }
        boolean wasTerminal = state.terminal();
        failure = new StreamResetException(id, errorCode, true);
        state = StreamState.RESET;
        int increment = returnCreditLocked();
        if (increment > 0) {
            Thread.ofVirtual().start(() -> connection.sendWindowUpdate(0, increment));
        }
        if (!wasTerminal) {
            finishLocked();
        }
        changed.signalAll();
        return true;
    }

    void connectionLostLocked(ConnectionLostException cause) {
        if (state == StreamState.RESET || state == StreamState.LOST) {
            return;
        }
        failure = cause;
        state = StreamState.LOST;
        receive.takeOutstanding(); // the connection is gone: nothing to credit
        changed.signalAll();
    }

    /**
     * Fails Helidon's stream buffer so a reader blocked in {@code readOne} returns at once (Helidon wakes it neither
     * on a cancel nor on the connection's death).
     */
    void wakeHelidonReader() {
        try {
            helidon.rstStream(new Http2RstStream(Http2ErrorCode.CANCEL));
        } catch (RuntimeException e) {
            helidon.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------

    /**
     * Once both bodies have ended and the reader has consumed the end, Helidon's stream object is dropped from
     * its connection's stream map (Helidon would keep it for the connection's lifetime otherwise).
     */
    private void releaseHelidonStreamIfDone() {
        boolean done;
        lock.lock();
        try {
            done = readerDone && !state.localOpen();
        } finally {
            lock.unlock();
        }
        if (done) {
            helidon.close();
        }
    }

    private void remoteEndLocked() {
        StreamState before = state;
        state = state.onRemoteEnd();
        if (!before.terminal() && state.terminal()) {
            finishLocked();
            changed.signalAll(); // awaitClosed
        }
    }

    private void finishLocked() {
        connection.streamFinishedLocked(this);
    }

    private int returnCreditLocked() {
        long outstanding = receive.takeOutstanding();
        return outstanding > 0 ? connection.creditConnectionLocked(outstanding) : 0;
    }

    private void throwIfNotWritableLocked() throws TransportException {
        if (failure != null) {
            throw failure;
        }
        if (!state.localOpen()) {
            throw new StreamClosedException("request body of stream " + id + " already ended");
        }
    }

    private void throwIfFailed() throws TransportException {
        lock.lock();
        try {
            if (failure != null) {
                throw failure;
            }
        } finally {
            lock.unlock();
        }
    }

    private TransportException failureOr(String message) {
        lock.lock();
        try {
            if (failure != null) {
                return failure;
            }
            ConnectionLostException lost = connection.failureLocked();
            return lost != null ? lost : new StreamClosedException(message);
        } finally {
            lock.unlock();
        }
    }

    private void writeData(byte[] payload, int offset, int length) throws TransportException {
        try {
            if (!connection.writer().writeDataUnless(() -> resetSent, id, payload, offset, length,
                    Http2Frames.MAX_FRAME_PAYLOAD)) {
                returnUnsentWindow(length);
                throwIfFailed();
                throw new StreamClosedException("stream " + id + " was reset");
            }
        } catch (UncheckedIOException e) {
            throw failureOr("write on stream " + id + " failed");
        }
    }

    /**
     * DATA taken from the windows but never written, because the stream was reset first: the peer never saw those
     * bytes, so they never come back as a WINDOW_UPDATE. The connection's send window gets them back here, or every
     * such race would shrink it for good, until the other streams starve (the stream's own window dies with it).
     */
    private void returnUnsentWindow(int length) {
        lock.lock();
        try {
            connection.growSendWindowLocked(length);
        } finally {
            lock.unlock();
        }
    }

    private void writeFrame(byte[] header, byte[] payload, int offset, int length) throws TransportException {
        try {
            if (!connection.writer().writeOwnFrameUnless(() -> resetSent, header, payload, offset, length)) {
                throwIfFailed();
                throw new StreamClosedException("stream " + id + " was reset");
            }
        } catch (UncheckedIOException e) {
            throw failureOr("write on stream " + id + " failed");
        }
    }
}
