package io.continuum.broker.relay.transport;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.h2.Http2Writer;
import io.continuum.broker.h2.ResponseFieldRules;

/**
 * One bus stream on an {@link Http2BusConnection}: its state ({@link StreamState}), both windows, and its inbound
 * buffer, all guarded by the connection's lock ({@link #changed} is a condition of it); one writer at a time
 * ({@link #writeLock}) and one reader at a time ({@link #readLock}).
 *
 * <p>Inbound bytes are copied once, from the reader's buffer into a chunk of this stream's queue, and handed to
 * {@link #read()} in wire order; a reset by the peer is reported after every byte that arrived before it. The
 * window is replenished only by {@link #release(int)} (bus-protocol-v1 section 6). A local reset discards what is
 * queued and credits it back to the connection at once.
 */
final class Http2BusStream implements BusStream {
    private static final byte[] NO_BYTES = new byte[0];
    /**
     * Most bytes taken from the windows and added in one go (four 16 KiB DATA frames): fewer lock rounds and TLS
     * writes per chunk, while other streams' frames still interleave between batches.
     */
    private static final int WRITE_BATCH = 4 * 16_384;
    private final Http2BusConnection connection;
    private final int id;
    private final ReentrantLock lock;
    /** State changes: the head, the end, a reset, the connection's death (awaitResponseHead, awaitClosed). */
    private final Condition changed;
    /** The reader's: bytes arrived (signalled only while it waits, not per frame) or the stream ended. */
    private final Condition readable;
    /** The writer's: the window it waits for opened (only that one), or the stream ended. */
    private final Condition writable;
    private final ReentrantLock writeLock = new ReentrantLock();
    private final ReentrantLock readLock = new ReentrantLock();
    private final long slotGrantedNanos;

    // guarded by lock
    private StreamState state = StreamState.OPEN;
    private TransportException failure;
    private long sendWindow;
    private final StreamReceiveWindow receive;
    private ResponseHead head;
    private final InboundBuffer inbound = new InboundBuffer();
    private boolean remoteEnded;
    /** Whether the reader waits for bytes: a DATA frame signals it only then. */
    private boolean readerWaiting;
    /** What the writer waits for, if anything: a window update signals it only when it is that window. */
    private WriterWait writerWaits = WriterWait.NONE;

    /** What a blocked {@link #write} waits for. */
    enum WriterWait {
        NONE,
        /** This stream's send window: a WINDOW_UPDATE on the stream, or a larger SETTINGS_INITIAL_WINDOW_SIZE. */
        STREAM_WINDOW,
        /** The connection's send window: a WINDOW_UPDATE on stream 0 (the connection keeps the waiters). */
        CONNECTION_WINDOW
    }

    /** Test seam ({@link ConnectionProbe#afterResetWritten}). */
    volatile Runnable afterResetWritten;

    // guarded by the connection's frame writer's monitor: set before our RST_STREAM is added, checked before DATA
    private boolean resetSent;

    Http2BusStream(Http2BusConnection connection, int id, long peerInitialWindow, long slotGrantedNanos) {
        this.connection = connection;
        this.id = id;
        this.lock = connection.lock;
        this.changed = lock.newCondition();
        this.readable = lock.newCondition();
        this.writable = lock.newCondition();
        this.sendWindow = peerInitialWindow;
        this.slotGrantedNanos = slotGrantedNanos;
        this.receive = new StreamReceiveWindow(connection.settings().streamWindowUpdateThreshold());
    }

    @Override
    public long id() {
        return id;
    }

    int idInt() {
        return id;
    }

    @Override
    public long slotGrantedNanos() {
        return slotGrantedNanos;
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
                        long connectionWindow = connection.sendWindowLocked();
                        n = (int) Math.min(Math.min(data.remaining(), WRITE_BATCH),
                                Math.min(connectionWindow, sendWindow));
                        if (n > 0) {
                            break;
                        }
                        // for window, without holding other streams back and without a timeout; woken only by the
                        // window it waits for (or the stream's end)
                        if (sendWindow <= 0) {
                            writerWaits = WriterWait.STREAM_WINDOW;
                        } else {
                            writerWaits = WriterWait.CONNECTION_WINDOW;
                            connection.awaitConnectionWindowLocked(this);
                        }
                        try {
                            writable.await();
                        } finally {
                            writerWaits = WriterWait.NONE;
                        }
                    }
                    connection.consumeSendWindowLocked(n);
                    sendWindow -= n;
                } finally {
                    lock.unlock();
                }
                add(data, n);
                connection.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StreamClosedException("interrupted while writing stream " + id);
        } catch (ConnectionLostException e) {
            throw failureOr(e);
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public boolean tryAdd(ByteBuffer data) throws TransportException {
        if (!writeLock.tryLock()) {
            return false; // the stream's own writer is under way: the bytes wait behind it
        }
        try {
            int n = data.remaining();
            if (n == 0) {
                return true;
            }
            lock.lock();
            try {
                throwIfNotWritableLocked();
                if (n > WRITE_BATCH || n > sendWindow || n > connection.sendWindowLocked()) {
                    return false;
                }
                connection.consumeSendWindowLocked(n);
                sendWindow -= n;
            } finally {
                lock.unlock();
            }
            add(data, n);
            return true;
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public void flush() throws TransportException {
        try {
            connection.flush();
        } catch (ConnectionLostException e) {
            throw failureOr(e);
        }
    }

    /**
     * Writer's lock held, {@code n} bytes taken from both windows: adds them as DATA for the next flush; bytes that
     * can no longer be sent go back to the connection's window.
     */
    private void add(ByteBuffer data, int n) throws TransportException {
        Runnable seam = connection.probe.beforeDataAdded;
        if (seam != null) {
            seam.run();
        }
        boolean added;
        Http2Writer frames = connection.frames();
        boolean closing;
        synchronized (frames) {
            closing = frames.ended(); // our GOAWAY is out: nothing may follow it
            added = !resetSent && !closing;
            if (added) {
                frames.data(id, false, data, n); // copied into the next write, from a direct buffer too
            }
        }
        if (!added) {
            lock.lock();
            try {
                connection.returnSendWindowLocked(n); // the peer never saw these bytes
            } finally {
                lock.unlock();
            }
            throw failureOr(closing ? "the connection is closing" : "stream " + id + " was reset");
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
                    wakeAllLocked(); // awaitClosed
                }
            } finally {
                lock.unlock();
            }
            try {
                Http2Writer frames = connection.frames();
                synchronized (frames) {
                    if (!resetSent) {
                        frames.data(id, true, NO_BYTES, 0, 0);
                    }
                }
                connection.flush();
            } finally {
                if (finished) {
                    connection.releaseSlot(); // behind our END_STREAM, which is what frees the slot for the peer
                }
            }
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public ResponseHead awaitResponseHead(Duration timeout) throws TimeoutException, TransportException {
        long nanos = timeout.toNanos();
        lock.lock();
        try {
            while (head == null) {
                if (failure != null) {
                    throw failure;
                }
                if (nanos <= 0) {
                    throw new TimeoutException("no response head on stream " + id + " within " + timeout.toMillis()
                            + " ms");
                }
                nanos = changed.awaitNanos(nanos);
            }
            return head;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StreamClosedException("interrupted while waiting for the response head of stream " + id);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public ByteBuffer read() throws TransportException {
        readLock.lock();
        try {
            lock.lock();
            try {
                ByteBuffer chunk;
                // the last chunk is done with (one reader, which calls again only after writing it onward)
                while ((chunk = inbound.take()) == null && !remoteEnded && failure == null) {
                    readerWaiting = true;
                    try {
                        readable.await();
                    } finally {
                        readerWaiting = false;
                    }
                }
                if (chunk != null) {
                    return chunk; // before an end or a reset that came after it, in wire order
                }
                if (remoteEnded) {
                    return null;
                }
                throw failure;
            } finally {
                lock.unlock();
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
            streamIncrement = releaseLocked(n);
            connectionIncrement = connection.creditConnectionLocked(n);
        } finally {
            lock.unlock();
        }
        connection.writeWindowUpdates(id, streamIncrement, connectionIncrement);
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
    public TransportException failure() {
        lock.lock();
        try {
            return failure;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void cancel() {
        reset(new StreamResetException(id, StreamResetException.CANCEL, false), StreamResetException.CANCEL);
    }

    /** The peer broke this stream's rules: a stream error, answered with a reset; the connection goes on. */
    void resetMalformed(String violation, long errorCode) {
        reset(new MalformedResponseException(id, violation, errorCode), errorCode);
    }

    @Override
    public String toString() {
        return "BusStream[" + id + "]";
    }

    // ---------------------------------------------------------------------------------------------------------
    // events from the connection's reader (lock held)

    /** The connection's send window opened and this stream's writer waited for it ({@link WriterWait}). */
    void connectionWindowOpenedLocked() {
        if (writerWaits == WriterWait.CONNECTION_WINDOW) {
            writable.signal();
            connection.countWriterWakeUpLocked();
        }
    }

    /** @return false if the window would pass 2^31-1 (RFC 9113 section 6.9.1) */
    boolean adjustSendWindowLocked(long delta) {
        if (sendWindow + delta > Integer.MAX_VALUE) {
            return false;
        }
        sendWindow += delta; // may go negative after a SETTINGS (section 6.9.2): writes wait until it is positive
        if (delta > 0 && sendWindow > 0 && writerWaits == WriterWait.STREAM_WINDOW) {
            writable.signal();
            connection.countWriterWakeUpLocked();
        }
        return true;
    }

    /** @return what becomes of DATA from the peer on this stream now */
    DataVerdict dataVerdictLocked() {
        if (state.terminal()) {
            return DataVerdict.IGNORE;
        }
        if (head == null) {
            return DataVerdict.BEFORE_HEADERS;
        }
        return state.remoteOpen() ? DataVerdict.PASS : DataVerdict.AFTER_END_STREAM;
    }

    /**
     * DATA this stream allows: queued for the reader (copied out of the reader's buffer).
     *
     * @return false if the peer overran this stream's receive window
     */
    boolean receivedLocked(ByteBuffer data, int flowControlled, boolean endStream) {
        if (!receive.received(flowControlled)) {
            return false;
        }
        inbound.append(data); // bytes, not a chunk per frame: a flood of small frames costs no objects
        if (endStream) {
            remoteEndLocked();
            wakeAllLocked();
        } else if (readerWaiting && inbound.size() > 0) {
            readerWaiting = false; // one signal until it waits again, however many frames come meanwhile
            readable.signal();
            connection.countReaderWakeUpLocked();
        }
        return true;
    }

    /** Lock held: records released bytes; @return a stream WINDOW_UPDATE increment to send now, or 0 */
    int releaseLocked(int n) {
        return receive.release(n, state.remoteOpen());
    }

    /**
     * What a header block broke: the stream is reset with {@code resetCode} (RFC 9113 section 8.1.1: a malformed
     * response is a stream error on its stream alone).
     */
    record Violation(String what, long resetCode) {
    }

    /**
     * A header block for this stream: an informational head (1xx, read past: RFC 9113 section 8.1), the response
     * head, or trailers that end the stream.
     *
     * @return what it broke, or null when it is taken
     */
    Violation headersLocked(List<HeaderField> fields, boolean endStream) {
        if (state.terminal()) {
            return null; // this side is done with the stream: ignored (section 5.1)
        }
        if (!state.remoteOpen()) {
            return new Violation("HEADERS after the response's END_STREAM (RFC 9113 section 5.1)",
                    ErrorCode.STREAM_CLOSED.code());
        }
        if (head == null) {
            Optional<String> malformed = ResponseFieldRules.headViolation(fields);
            if (malformed.isPresent()) {
                return new Violation(malformed.get(), ErrorCode.PROTOCOL_ERROR.code());
            }
            ResponseHead parsed = responseHead(fields);
            if (parsed.status() == 101) {
                return new Violation("status 101: not allowed in HTTP/2 (RFC 9113 section 8.6)",
                        ErrorCode.PROTOCOL_ERROR.code());
            }
            if (ResponseFieldRules.informational(parsed.status())) {
                if (endStream) {
                    return new Violation("informational status " + parsed.status() + " with END_STREAM (RFC 9113"
                            + " section 8.1)", ErrorCode.PROTOCOL_ERROR.code());
                }
                return null; // any number of 1xx heads may come before the final one
            }
            head = parsed;
        } else if (!endStream) {
            return new Violation("HEADERS after the response head without END_STREAM (RFC 9113 section 8.1)",
                    ErrorCode.PROTOCOL_ERROR.code());
        } else {
            Optional<String> malformed = ResponseFieldRules.trailersViolation(fields);
            if (malformed.isPresent()) {
                return new Violation(malformed.get(), ErrorCode.PROTOCOL_ERROR.code());
            }
        }
        if (endStream) {
            remoteEndLocked();
        }
        wakeAllLocked();
        return null;
    }

    /** @return bytes to credit back to the connection now (the caller sends the WINDOW_UPDATE) */
    int resetByPeerLocked(long errorCode) {
        return endedByPeerLocked(new StreamResetException(id, errorCode, true));
    }

    /**
     * The peer's graceful GOAWAY left this stream above its last-stream-id: the peer never processed it and sends
     * nothing more for it, so it ends as a reset by the peer does, with {@code cause}.
     *
     * @return bytes to credit back to the connection now (the caller sends the WINDOW_UPDATE)
     */
    int notProcessedLocked(ConnectionLostException cause) {
        return endedByPeerLocked(cause);
    }

    private int endedByPeerLocked(TransportException cause) {
        if (state == StreamState.RESET || state == StreamState.LOST) {
            return 0;
        }
        boolean wasTerminal = state.terminal();
        failure = cause;
        state = StreamState.RESET;
        int credit = returnCreditLocked();
        if (!wasTerminal) {
            connection.streamFinishedLocked(this); // the peer counts the stream closed from its RST_STREAM on
        }
        wakeAllLocked();
        return credit;
    }

    void connectionLostLocked(ConnectionLostException cause) {
        if (state == StreamState.RESET || state == StreamState.LOST) {
            return;
        }
        failure = cause;
        state = StreamState.LOST;
        receive.takeOutstanding(); // the connection is gone: nothing to credit
        wakeAllLocked();
    }

    // ---------------------------------------------------------------------------------------------------------

    /** A reset by this side: {@code cause} is what every later call on the stream throws. */
    private void reset(TransportException cause, long errorCode) {
        boolean sendReset;
        boolean releaseSlot;
        int credit;
        lock.lock();
        try {
            if (state == StreamState.RESET || state == StreamState.LOST) {
                return;
            }
            sendReset = state != StreamState.CLOSED;
            releaseSlot = !state.terminal();
            failure = cause;
            state = StreamState.RESET;
            inbound.clear(); // nobody reads them now: credited below with the rest
            credit = returnCreditLocked();
            if (releaseSlot) {
                connection.streamForgottenLocked(this); // DATA that still arrives is credited to the connection
            }
            wakeAllLocked();
        } finally {
            lock.unlock();
        }
        try {
            Http2Writer frames = connection.frames();
            synchronized (frames) {
                resetSent = true;
                if (sendReset) {
                    frames.rstStream(id, (int) errorCode);
                }
                if (credit > 0) {
                    frames.windowUpdate(0, credit);
                }
            }
            connection.flush();
            Runnable hook = afterResetWritten;
            if (hook != null && sendReset) {
                hook.run();
            }
        } catch (ConnectionLostException e) {
            // the connection is failing; fail() reports it
        } finally {
            if (releaseSlot) {
                connection.releaseSlot(); // behind our RST_STREAM
            }
        }
    }

    /** A state change: whoever waits on this stream looks again. */
    private void wakeAllLocked() {
        changed.signalAll();
        readable.signalAll();
        writable.signalAll();
    }

    /** @return the segments of inbound bytes held (a test seam, {@link ConnectionProbe#inboundSegments}) */
    int inboundSegmentsLocked() {
        return inbound.segments();
    }

    private void remoteEndLocked() {
        remoteEnded = true;
        StreamState before = state;
        state = state.onRemoteEnd();
        if (!before.terminal() && state.terminal()) {
            connection.streamFinishedLocked(this); // our END_STREAM went out before: the slot is free
        }
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

    private TransportException failureOr(ConnectionLostException lost) {
        lock.lock();
        try {
            return failure != null ? failure : lost;
        } finally {
            lock.unlock();
        }
    }

    /** A head {@link ResponseFieldRules#headViolation} passed: one {@code :status} of three digits. */
    private static ResponseHead responseHead(List<HeaderField> fields) {
        int status = -1;
        List<Header> headers = new ArrayList<>(fields.size());
        for (HeaderField f : fields) {
            if (f.name().equals(":status")) {
                status = Integer.parseInt(f.value());
            } else {
                headers.add(new Header(f.name(), f.value(), f.sensitive()));
            }
        }
        return new ResponseHead(status, headers);
    }
}
