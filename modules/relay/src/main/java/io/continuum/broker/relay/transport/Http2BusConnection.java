package io.continuum.broker.relay.transport;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.event.Severity;
import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.h2.FrameHandler;
import io.continuum.broker.h2.HeaderField;
import io.continuum.broker.h2.Http2;
import io.continuum.broker.h2.Http2Error;
import io.continuum.broker.h2.Http2Reader;
import io.continuum.broker.h2.Http2Writer;

/**
 * One bus connection that this transport owns outright, on the project's frame codec ({@code io.continuum.broker.h2}):
 * one reader thread (virtual) parses every inbound byte once and dispatches each frame to the stream that owns it;
 * the {@link Http2Writer} owns HPACK encoding and the write order, and gathers frames of many streams into one TLS
 * write. The connection assigns each stream's id and registers the stream before its HEADERS are written, so no
 * frame of the peer can find a stream it does not know yet. Its parts: {@link ConnectionWindows},
 * {@link StreamSlots}, {@link Keepalive}, {@link ControlFlusher}, and per stream {@link StreamState},
 * {@link StreamReceiveWindow} and {@link InboundBuffer}.
 *
 * <p>Laid out as OkHttp's {@code Http2Connection}: the outbound half first (open, close, the {@code write…} methods
 * and what {@link Http2BusStream} calls), then the inner {@link Reader}, the inbound half, one method per frame
 * type, and last the {@link Probe} its tests read. Both halves read and change the same lock-guarded state (stream
 * map, windows, failure), which is why they are one file: the orderings that matter (a stream registered before its
 * HEADERS, the slot freed only behind a stream's last frame, every dropped DATA byte credited once) stay visible in
 * one place.
 *
 * <p>A GOAWAY of this side is the last frame it writes ({@link Http2Writer#lastGoAway}): frames added after it,
 * DATA of a stream still writing among them, are dropped.
 *
 * <p>Locking: {@link #lock} guards the stream map, every stream's state and both directions' windows; it is never
 * held while writing to the socket. The writer's monitor orders frames: a stream id is taken, and a stream's
 * "reset sent" mark is checked, under it, so ids go out in order and no DATA follows our RST_STREAM.
 */
final class Http2BusConnection implements BusConnection {
    private static final EventLog LOG = EventLog.of(Http2BusConnection.class);
    private static final int MAX_WINDOW = Integer.MAX_VALUE;
    /** How long a close waits for its GOAWAY to reach the socket before closing it regardless. */
    private static final Duration GOAWAY_LINGER = Duration.ofSeconds(1);
    /**
     * Consecutive DATA frames without a byte and without END_STREAM (on any stream) tolerated; the next is
     * ENHANCE_YOUR_CALM. Netty's default ({@code Http2FrameCodecBuilder.decoderEnforceMaxConsecutiveEmptyDataFrames}).
     */
    static final int MAX_CONSECUTIVE_EMPTY_DATA = 2;
    /** RST_STREAM and PRIORITY frames tolerated per window: see docs/protocol.md, "What a router may make it spend". */
    static final int MAX_RESETS_PER_WINDOW = 2_048;
    static final int MAX_PRIORITIES_PER_WINDOW = 2_048;
    static final Duration FRAME_RATE_WINDOW = Duration.ofSeconds(30);
    /**
     * Client stream ids left when {@link #onStreamIdsRunningOut} fires: room for every stream the session may still
     * open while it drains (the opens already under way; new subscribes are refused), many times over.
     */
    static final int STREAM_IDS_RESERVE = 65_536;
    private static final int LAST_STREAM_ID = Integer.MAX_VALUE;

    final ReentrantLock lock = new ReentrantLock();
    private final TransportSettings settings;
    private final TlsDialer.Dialed dialed;
    private final Http2Writer frames;
    private final Http2Reader reader;
    /** The inbound half: the handler of every frame the peer sends, and the loop on the reader thread. */
    private final Reader inbound = new Reader();
    private final StreamSlots slots;
    private final ConnectionWindows windows;
    private final Keepalive keepalive;
    /** Writes what the reader thread adds: the reader never blocks on the socket. */
    private final ControlFlusher flusher;
    private volatile Thread readerThread;
    private final Map<Integer, Http2BusStream> streams = new HashMap<>(); // guarded by lock
    /** Streams whose writer waits for the connection's send window: the only ones a WINDOW_UPDATE on 0 wakes. */
    private final Set<Http2BusStream> connectionWindowWaiters = new LinkedHashSet<>(); // guarded by lock
    /** Signals to a stream's reader and writer (test seam, {@link ConnectionProbe}): they follow need, not frames. */
    private long readerWakeUps; // guarded by lock
    private long writerWakeUps; // guarded by lock
    private final List<Consumer<TransportException>> closeListeners = new CopyOnWriteArrayList<>();
    private final List<Runnable> goAwayListeners = new CopyOnWriteArrayList<>();
    private final List<Runnable> idsRunningOutListeners = new CopyOnWriteArrayList<>();
    /** Set once the ids ran low: the listeners have been told (guarded by the frames' monitor). */
    private boolean idsRunningOut;
    private final CountDownLatch firstSettings = new CountDownLatch(1);
    /** Why this side is closing the connection (its own close, or the peer's GOAWAY once its streams are gone). */
    private final AtomicReference<ConnectionLostException> closingLocally = new AtomicReference<>();
    private final String authority;
    private final String userAgent;
    /** What tests may read and the seams where they step in. */
    final Probe probe = new Probe();
    private int nextStreamId = 1; // guarded by the frames' monitor: ids reach the wire in the order taken
    /** The highest stream id this client opened, set before its HEADERS are written: see {@link #requireOpened}. */
    private volatile int highestOpenedStreamId;
    private ConnectionLostException failure; // guarded by lock
    /** Set by the peer's graceful GOAWAY: what a stream above its last-stream-id and a new open fail with. */
    private ConnectionLostException goingAway; // guarded by lock
    private int goAwayLastStreamId = Integer.MAX_VALUE; // guarded by lock; a later GOAWAY may only lower it

    Http2BusConnection(BusEndpoint endpoint, TransportSettings settings, TlsDialer.Dialed dialed) throws IOException {
        this.settings = settings;
        this.dialed = dialed;
        this.frames = new Http2Writer(dialed.tls().getOutputStream());
        this.reader = new Http2Reader(dialed.tls().getInputStream(), inbound);
        reader.expectSettingsFirst();
        this.slots = new StreamSlots(settings.localStreamLimit());
        this.windows = new ConnectionWindows(this.settings);
        this.keepalive = new Keepalive(lock, this::failureLocked, this::writePing,
                detail -> fail(ConnectionLostException.Reason.KEEPALIVE_TIMEOUT, detail, null), settings);
        this.flusher = new ControlFlusher(frames, e -> fail(ConnectionLostException.Reason.SOCKET,
                "write failed: " + e.getMessage(), e));
        String host = endpoint.host().indexOf(':') >= 0 ? "[" + endpoint.host() + "]" : endpoint.host();
        this.authority = endpoint.port() == 443 ? host : host + ":" + endpoint.port();
        this.userAgent = endpoint.userAgent();
    }

    /** Preface, SETTINGS and the connection window; then waits (until {@code deadline}) for the peer's SETTINGS. */
    void start(long deadline) throws BusConnectException {
        Map<Integer, Long> local = new LinkedHashMap<>();
        local.put(Http2.SETTINGS_ENABLE_PUSH, 0L);                                      // no push
        local.put(Http2.SETTINGS_INITIAL_WINDOW_SIZE, (long) TransportSettings.STREAM_RECEIVE_WINDOW);
        local.put(Http2.SETTINGS_MAX_HEADER_LIST_SIZE, Http2Reader.DEFAULT_MAX_HEADER_LIST_SIZE); // the reader's
        synchronized (frames) {
            frames.clientPreface();
            frames.settings(local);
            frames.windowUpdate(0, settings.connectionReceiveWindow() - TransportSettings.STREAM_RECEIVE_WINDOW);
        }
        lock.lock();
        try {
            windows.opened();
        } finally {
            lock.unlock();
        }
        try {
            frames.flush();
        } catch (IOException e) {
            throw new BusConnectException(BusConnectException.Kind.HTTP2, "preface write failed: " + e.getMessage(),
                    e);
        }
        Thread.ofVirtual().name("bus-h2-reader").start(inbound);
        try {
            if (!firstSettings.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new BusConnectException(BusConnectException.Kind.TIMEOUT, "no SETTINGS from the peer", null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BusConnectException(BusConnectException.Kind.TIMEOUT, "interrupted while connecting", e);
        }
        ConnectionLostException lost = failure();
        if (lost != null) {
            throw new BusConnectException(BusConnectException.Kind.HTTP2, "HTTP/2 set-up failed: "
                    + lost.getMessage(), lost);
        }
        keepalive.start("bus-keepalive");
    }

    @Override
    public BusStream open(StreamRequest request, Duration slotTimeout, BooleanSupplier commit)
            throws TransportException {
        throwIfFailed();
        slots.acquire(slotTimeout);
        long granted = System.nanoTime();
        List<HeaderField> head = requestFields(request);
        Http2BusStream stream;
        boolean idsLow = false;
        synchronized (frames) {
            ConnectionLostException lost = failure();
            if (lost == null && frames.ended()) { // closing: its GOAWAY is written, fail() follows
                lost = new ConnectionLostException(ConnectionLostException.Reason.CLOSED_LOCALLY, "closed", null);
            }
            if (lost == null) {
                lost = goingAway(); // the slot was granted before the peer's GOAWAY came
            }
            if (lost != null || !commit.getAsBoolean()) {
                slots.release(); // abandoned while it waited, or the connection died: nothing was written
                if (lost != null) {
                    throw lost;
                }
                return null;
            }
            if (nextStreamId < 0) {
                slots.release();
                fail(ConnectionLostException.Reason.PROTOCOL, "stream ids exhausted", null);
                throw failure();
            }
            int id = nextStreamId;
            nextStreamId += 2;
            if (!idsRunningOut && id > LAST_STREAM_ID - 2 * STREAM_IDS_RESERVE) {
                idsRunningOut = true;
                idsLow = true;
            }
            lock.lock();
            try {
                stream = new Http2BusStream(this, id, windows.peerInitialWindow(), granted);
                streams.put(id, stream);
                highestOpenedStreamId = id;
            } finally {
                lock.unlock();
            }
            frames.headers(id, false, head);
        }
        flush();
        Runnable hook = probe.afterHeadersWritten;
        if (hook != null) {
            hook.run();
        }
        if (idsLow) {
            LOG.info("bus_stream_ids_running_out").field("last_stream_id", stream.id())
                    .field("left", (LAST_STREAM_ID - stream.id()) / 2).log();
            for (Runnable listener : idsRunningOutListeners) {
                try {
                    listener.run();
                } catch (RuntimeException e) {
                    LOG.warn("connection_ids_listener_failed").cause(e).log();
                }
            }
        }
        return stream;
    }

    @Override
    public boolean isOpen() {
        return failure() == null;
    }

    @Override
    public void onClose(Consumer<TransportException> listener) {
        ConnectionLostException cause;
        lock.lock();
        try {
            cause = failure;
            if (cause == null) {
                closeListeners.add(listener);
                return;
            }
        } finally {
            lock.unlock();
        }
        listener.accept(cause);
    }

    @Override
    public void onStreamIdsRunningOut(Runnable listener) {
        idsRunningOutListeners.add(listener);
    }

    @Override
    public void onGoAway(Runnable listener) {
        lock.lock();
        try {
            if (failure != null) {
                return;
            }
            if (goingAway == null) {
                goAwayListeners.add(listener);
                return;
            }
        } finally {
            lock.unlock();
        }
        listener.run();
    }

    @Override
    public void close() {
        closeAs(new ConnectionLostException(ConnectionLostException.Reason.CLOSED_LOCALLY, "closed", null));
    }

    /** Our GOAWAY (NO_ERROR), then the close; once, whoever comes first. */
    private void closeAs(ConnectionLostException why) {
        if (!closingLocally.compareAndSet(null, why)) {
            return;
        }
        if (isOpen()) {
            writeGoAway(ErrorCode.NO_ERROR.code());
        }
        fail(why.reason(), why.getMessage(), null);
    }

    /** After the peer's graceful GOAWAY: once the last stream's last frame is written, our GOAWAY, then the close. */
    private void closeOnceStreamsGone() {
        try {
            if (!slots.awaitNoneInUse()) {
                return; // died or closed meanwhile
            }
        } catch (InterruptedException e) {
            return;
        }
        closeAs(new ConnectionLostException(ConnectionLostException.Reason.GOING_AWAY,
                "peer sent GOAWAY NO_ERROR and its last stream ended", null));
    }

    /** Lock held: why the connection ended, or null while it is open. */
    ConnectionLostException failureLocked() {
        return failure;
    }

    /** The keepalive's PING (not an ACK). */
    private void writePing(long opaque) {
        writeControl(w -> w.ping(false, opaque));
    }

    /** Declares the connection dead: idempotent, from any thread. */
    void fail(ConnectionLostException.Reason reason, String message, Throwable cause) {
        ConnectionLostException closing = closingLocally.get();
        ConnectionLostException exception = closing != null ? closing // our own close made the peer hang up
                : new ConnectionLostException(reason, message, cause);
        reason = exception.reason();
        message = exception.getMessage();
        List<Http2BusStream> open;
        lock.lock();
        try {
            if (failure != null) {
                return;
            }
            failure = exception;
            open = new ArrayList<>(streams.values());
            streams.clear();
            for (Http2BusStream stream : open) {
                stream.connectionLostLocked(exception);
            }
        } finally {
            lock.unlock();
        }
        // closing TCP first unblocks writers stuck in a TLS write (SSLSocket.close would wait for their lock)
        TlsDialer.closeQuietly(dialed.tcp());
        TlsDialer.closeQuietly(dialed.tls());
        slots.fail(exception);
        keepalive.stop();
        flusher.stop();
        firstSettings.countDown();
        for (Consumer<TransportException> listener : closeListeners) {
            try {
                listener.accept(exception);
            } catch (RuntimeException e) {
                LOG.warn("connection_close_listener_failed").cause(e).log();
            }
        }
        closeListeners.clear();
        LOG.at(reason == ConnectionLostException.Reason.CLOSED_LOCALLY ? Severity.DEBUG : Severity.INFO,
                        "bus_connection_ended")
                .field("reason", reason.name().toLowerCase(Locale.ROOT)).field("detail", message).cause(cause).log();
    }

    // ---------------------------------------------------------------------------------------------------------
    // for Http2BusStream

    TransportSettings settings() {
        return settings;
    }

    /** @return what tests may read of this connection, and its seams */
    ConnectionProbe probe() {
        return probe;
    }

    /** @return the handler of inbound frames (the reader thread's; a benchmark drives it from memory) */
    FrameHandler frameHandler() {
        return inbound;
    }

    Http2Writer frames() {
        return frames;
    }

    /**
     * Writes what was gathered; a failed write ends the connection, and the caller learns why. On the reader thread
     * it only asks the {@link ControlFlusher} to write: the reader never blocks on the socket. Past its bound of
     * unwritten answers the connection ends (ENHANCE_YOUR_CALM).
     */
    void flush() throws ConnectionLostException {
        if (Thread.currentThread() == readerThread) {
            if (!flusher.request()) {
                connectionError(ErrorCode.ENHANCE_YOUR_CALM, "more than " + ControlFlusher.MAX_QUEUED
                        + " control frames wait for a socket the peer does not read (RFC 9113 section 10.5)");
                throw failure();
            }
            return;
        }
        try {
            frames.flush();
        } catch (IOException e) {
            fail(ConnectionLostException.Reason.SOCKET, "write failed: " + e.getMessage(), e);
            throw failure();
        }
    }

    /** Lock held. @return the peer's connection send window */
    long sendWindowLocked() {
        return windows.sendWindow();
    }

    /** Lock held. */
    void consumeSendWindowLocked(int n) {
        windows.consumeSendWindow(n);
    }

    /** Lock held: DATA taken from the window but never written (a reset came first) goes back to it. */
    void returnSendWindowLocked(int n) {
        windows.peerUpdate(n);
        wakeConnectionWindowWaitersLocked();
    }

    /** Lock held: the stream's writer is about to wait for the connection's send window. */
    void awaitConnectionWindowLocked(Http2BusStream stream) {
        connectionWindowWaiters.add(stream);
    }

    /** Lock held: the connection's send window grew: the writers waiting for it (only those) look again. */
    private void wakeConnectionWindowWaitersLocked() {
        if (connectionWindowWaiters.isEmpty()) {
            return;
        }
        for (Http2BusStream waiter : connectionWindowWaiters) {
            waiter.connectionWindowOpenedLocked();
        }
        connectionWindowWaiters.clear();
    }

    /** @return the reader's answers not yet written (the bench of the reader path waits for none between batches) */
    int queuedControlFrames() {
        return flusher.queued();
    }

    /** Lock held. */
    void countReaderWakeUpLocked() {
        readerWakeUps++;
    }

    /** Lock held. */
    void countWriterWakeUpLocked() {
        writerWakeUps++;
    }

    /** Lock held: credits bytes released or never to be released; returns an increment to send now, or 0. */
    int creditConnectionLocked(long bytes) {
        return windows.credit(bytes);
    }

    /** Lock held: the stream ended and its last frame is written (or none is due): its slot is free. */
    void streamFinishedLocked(Http2BusStream stream) {
        streams.remove(stream.idInt());
        connectionWindowWaiters.remove(stream);
        slots.release();
    }

    /** Lock held: the stream ended but its last frame is still to be written; then {@link #releaseSlot()}. */
    void streamForgottenLocked(Http2BusStream stream) {
        streams.remove(stream.idInt());
        connectionWindowWaiters.remove(stream);
    }

    /**
     * Gives a stream's slot back, only once its last frame is written: the peer counts the stream open until it
     * reads that frame, so a stream opened in the freed slot must put its HEADERS behind it.
     */
    void releaseSlot() {
        slots.release();
    }

    /** WINDOW_UPDATEs for a stream and the connection, in one write; nothing for zero increments. */
    void writeWindowUpdates(int streamId, int streamIncrement, int connectionIncrement) {
        if (streamIncrement <= 0 && connectionIncrement <= 0) {
            return;
        }
        writeControl(w -> {
            if (streamIncrement > 0) {
                w.windowUpdate(streamId, streamIncrement);
            }
            if (connectionIncrement > 0) {
                w.windowUpdate(0, connectionIncrement);
            }
        });
    }

    /** @return what a new stream fails with once the peer's graceful GOAWAY came, or null */
    private ConnectionLostException goingAway() {
        lock.lock();
        try {
            return goingAway;
        } finally {
            lock.unlock();
        }
    }

    ConnectionLostException failure() {
        lock.lock();
        try {
            return failure;
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------------------------------------------------

    /** A frame of the connection's own (no window): a failure is reported through {@link #fail}. */
    private void writeControl(Consumer<Http2Writer> frame) {
        synchronized (frames) {
            frame.accept(frames);
        }
        try {
            flush();
        } catch (ConnectionLostException e) {
            // fail() has reported it
        }
    }

    private void streamError(int streamId, ErrorCode code, String message) {
        Http2BusStream stream;
        lock.lock();
        try {
            stream = streams.get(streamId);
        } finally {
            lock.unlock();
        }
        if (stream != null) {
            stream.resetMalformed(message, code.code());
        } else {
            writeControl(w -> w.rstStream(streamId, code.code()));
        }
    }

    private void connectionError(ErrorCode code, String message) {
        if (isOpen()) {
            writeGoAway(code.code());
        }
        fail(ConnectionLostException.Reason.PROTOCOL, message, null);
    }

    /**
     * GOAWAY (last stream 0: this side accepts no streams), written by its own thread and waited for up to
     * {@link #GOAWAY_LINGER}: a socket the peer stopped reading must not hold the close.
     */
    private void writeGoAway(int errorCode) {
        synchronized (frames) {
            frames.lastGoAway(0, errorCode, new byte[0]); // nothing this connection writes follows it
        }
        Thread writer = Thread.ofVirtual().name("bus-goaway").start(() -> {
            try {
                frames.flush();
            } catch (IOException e) {
                // the connection is ending anyway
            }
        });
        try {
            writer.join(GOAWAY_LINGER);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Runnable hook = probe.afterGoAwayWritten;
        if (hook != null) {
            hook.run();
        }
    }

    private void throwIfFailed() throws ConnectionLostException {
        ConnectionLostException lost = failure();
        if (lost != null) {
            throw lost;
        }
    }

    private List<HeaderField> requestFields(StreamRequest request) {
        List<HeaderField> fields = new ArrayList<>(request.headers().size() + 5);
        fields.add(new HeaderField(":method", request.method()));
        fields.add(new HeaderField(":scheme", "https"));
        fields.add(new HeaderField(":authority", authority));
        fields.add(new HeaderField(":path", request.path()));
        boolean userAgentGiven = false;
        for (Header header : request.headers()) {
            fields.add(new HeaderField(header.name(), header.value(), header.sensitive()));
            userAgentGiven |= header.name().equals("user-agent");
        }
        if (!userAgentGiven) {
            fields.add(new HeaderField("user-agent", userAgent));
        }
        return fields;
    }

    // ---------------------------------------------------------------------------------------------------------
    // the inbound half

    /**
     * What the peer sends, in wire order, on the connection's one reader thread (as OkHttp's {@code ReaderRunnable}):
     * the loop that asks the {@link Http2Reader} for frames, and the {@link FrameHandler} it hands each one to. The
     * counters of frames that change nothing are this thread's own; the rest it reads and changes under the
     * connection's {@link #lock}. What it answers it never writes itself: {@link #flush} hands that to the flusher.
     */
    private final class Reader implements FrameHandler, Runnable {
        /** Frames that change nothing, counted (RFC 9113 section 10.5). */
        private int consecutiveEmptyData;
        private final FrameRateLimit resets = new FrameRateLimit(MAX_RESETS_PER_WINDOW, FRAME_RATE_WINDOW);
        private final FrameRateLimit priorities = new FrameRateLimit(MAX_PRIORITIES_PER_WINDOW, FRAME_RATE_WINDOW);

        @Override
        public void run() {
            readerThread = Thread.currentThread();
            try {
                while (true) {
                    try {
                        if (!reader.nextFrame()) {
                            fail(ConnectionLostException.Reason.SOCKET, "peer closed the connection", null);
                            return;
                        }
                    } catch (Http2Error e) {
                        switch (e) {
                            case Http2Error.StreamError s -> streamError(s.streamId(), s.code(), s.getMessage());
                            case Http2Error.ConnectionError c -> {
                                connectionError(c.code(), c.getMessage());
                                return;
                            }
                        }
                    }
                }
            } catch (IOException e) {
                fail(ConnectionLostException.Reason.SOCKET, "read failed: " + e.getMessage(), e);
            } catch (RuntimeException e) {
                fail(ConnectionLostException.Reason.PROTOCOL, "reader failed: " + e.getClass().getSimpleName(), e);
            }
        }

        @Override
        public void settings(boolean ack, Map<Integer, Long> values) throws Http2Error {
            if (ack) {
                return;
            }
            lock.lock();
            try {
                for (Map.Entry<Integer, Long> setting : values.entrySet()) {
                    long value = setting.getValue();
                    switch (setting.getKey()) {
                        case Http2.SETTINGS_ENABLE_PUSH -> { // a server may only say 0 (section 6.5.2)
                            if (value != 0) {
                                throw new Http2Error.ConnectionError(ErrorCode.PROTOCOL_ERROR, "SETTINGS_ENABLE_PUSH "
                                        + value + " from a server (RFC 9113 section 6.5.2)");
                            }
                        }
                        case Http2.SETTINGS_MAX_CONCURRENT_STREAMS -> slots.limit(value); // new opens wait for it
                        case Http2.SETTINGS_INITIAL_WINDOW_SIZE -> { // every open stream's send window moves
                            long delta = windows.peerInitialWindow(value);
                            for (Http2BusStream stream : streams.values()) {
                                if (!stream.adjustSendWindowLocked(delta)) {
                                    throw new Http2Error.ConnectionError(ErrorCode.FLOW_CONTROL_ERROR,
                                            "SETTINGS_INITIAL_WINDOW_SIZE takes stream " + stream.id()
                                                    + "'s window above 2^31-1");
                                }
                            }
                        }
                        default -> {
                            // others and unknown identifiers (RFC 9113 section 6.5.2) need nothing here
                        }
                    }
                }
            } finally {
                lock.unlock();
            }
            Map<Integer, Long> forWriter = new HashMap<>(values);
            // DATA frames stay at 16 KiB whatever the peer allows (docs/benchmarks.md: larger ones did not pay)
            forWriter.remove(Http2.SETTINGS_MAX_FRAME_SIZE);
            writeControl(w -> {
                w.applyPeerSettings(forWriter);
                w.settingsAck();
            });
            firstSettings.countDown();
        }

        @Override
        public void ping(boolean ack, long payload) {
            if (ack) {
                keepalive.acknowledged(payload);
            } else {
                writeControl(w -> w.ping(true, payload));
            }
        }

        @Override
        public void goAway(int lastStreamId, int errorCode, byte[] debugData) {
            if (errorCode != 0) {
                fail(ConnectionLostException.Reason.GOAWAY, "peer sent GOAWAY " + ErrorCode.name(errorCode)
                        + " (last stream " + lastStreamId + ")", null);
                return;
            }
            // Graceful (RFC 9113 section 6.8): the streams the peer processed run on; the others it never saw.
            boolean first;
            int last;
            lock.lock();
            try {
                if (failure != null) {
                    return;
                }
                first = goingAway == null;
                goAwayLastStreamId = Math.min(goAwayLastStreamId, lastStreamId);
                last = goAwayLastStreamId;
                goingAway = new ConnectionLostException(ConnectionLostException.Reason.GOING_AWAY,
                        "peer sent GOAWAY NO_ERROR (last stream " + last + "): it takes no new streams", null);
            } finally {
                lock.unlock();
            }
            if (first) {
                // the listeners learn it before any stream fails, so a stream's end already reads as the peer's close
                slots.refuseNew(goingAway());
                LOG.info("bus_going_away").field("last_stream_id", last).field("open_streams", slots.inUse()).log();
                for (Runnable listener : goAwayListeners) {
                    try {
                        listener.run();
                    } catch (RuntimeException e) {
                        LOG.warn("connection_goaway_listener_failed").cause(e).log();
                    }
                }
                goAwayListeners.clear();
            }
            int credit = 0;
            lock.lock();
            try {
                for (Http2BusStream stream : new ArrayList<>(streams.values())) {
                    if (stream.idInt() > last) {
                        credit += stream.notProcessedLocked(new ConnectionLostException(
                                ConnectionLostException.Reason.GOING_AWAY, "stream " + stream.id()
                                + " not processed: above the peer's GOAWAY last stream " + last, null));
                    }
                }
            } finally {
                lock.unlock();
            }
            writeWindowUpdates(0, 0, credit);
            if (first) {
                Thread.ofVirtual().name("bus-going-away").start(Http2BusConnection.this::closeOnceStreamsGone);
            }
        }

        @Override
        public void windowUpdate(int streamId, int increment) throws Http2Error {
            if (streamId != 0) {
                requireOpened("WINDOW_UPDATE", streamId);
            }
            lock.lock();
            try {
                if (streamId == 0) {
                    if (windows.sendWindow() + increment > MAX_WINDOW) {
                        throw new Http2Error.ConnectionError(ErrorCode.FLOW_CONTROL_ERROR,
                                "connection send window above 2^31-1");
                    }
                    windows.peerUpdate(increment);
                    wakeConnectionWindowWaitersLocked();
                    return;
                }
                Http2BusStream stream = streams.get(streamId);
                if (stream != null && !stream.adjustSendWindowLocked(increment)) {
                    throw new Http2Error.StreamError(streamId, ErrorCode.FLOW_CONTROL_ERROR,
                            "stream send window above 2^31-1");
                }
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void priority(int streamId, int dependency, int weight, boolean exclusive) throws Http2Error {
            // ignored (RFC 9113 section 5.3.2 deprecates the scheme), counted
            if (!priorities.allow(System.nanoTime())) {
                throw new Http2Error.ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, "more than " + priorities.max()
                        + " PRIORITY in " + FRAME_RATE_WINDOW.toSeconds() + " s (RFC 9113 section 10.5)");
            }
        }

        @Override
        public void rstStream(int streamId, int errorCode) throws Http2Error {
            requireOpened("RST_STREAM", streamId);
            if (!resets.allow(System.nanoTime())) {
                throw new Http2Error.ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, "more than " + resets.max()
                        + " RST_STREAM in " + FRAME_RATE_WINDOW.toSeconds() + " s (RFC 9113 section 10.5)");
            }
            int credit;
            lock.lock();
            try {
                Http2BusStream stream = streams.get(streamId);
                credit = stream == null ? 0 : stream.resetByPeerLocked(errorCode & 0xFFFF_FFFFL);
            } finally {
                lock.unlock();
            }
            writeWindowUpdates(0, 0, credit);
        }

        @Override
        public void headers(int streamId, boolean endStream, List<HeaderField> fields) throws Http2Error {
            requireOpened("HEADERS", streamId);
            Http2BusStream stream;
            Http2BusStream.Violation violation;
            lock.lock();
            try {
                stream = streams.get(streamId);
                // a stream this side is done with: ignored (its block was decoded, so HPACK stays in step)
                violation = stream == null ? null : stream.headersLocked(fields, endStream);
            } finally {
                lock.unlock();
            }
            if (violation != null) {
                stream.resetMalformed(violation.what(), violation.resetCode());
            }
        }

        @Override
        public void data(int streamId, boolean endStream, ByteBuffer data, int flowControlled) throws Http2Error {
            requireOpened("DATA", streamId);
            int connectionCredit = 0;
            int streamCredit = 0;
            Http2BusStream violated = null;
            DataVerdict verdict = DataVerdict.IGNORE;
            lock.lock();
            try {
                if (!windows.received(flowControlled)) {
                    throw new Http2Error.ConnectionError(ErrorCode.FLOW_CONTROL_ERROR,
                            "peer exceeded the connection receive window");
                }
                Http2BusStream stream = streams.get(streamId);
                verdict = stream == null ? DataVerdict.IGNORE : stream.dataVerdictLocked();
                if (verdict != DataVerdict.PASS) {
                    // nobody will release these bytes: the connection's window gets them back now
                    connectionCredit = windows.credit(flowControlled);
                    violated = verdict.resetsStream() ? stream : null;
                } else {
                    // counted on live streams only, as Netty's decoder hands its empty-frame check only frames it does
                    // not ignore: DATA on a stream this side reset is ignored (RFC 9113 section 5.1), empty or not
                    if (endStream || data.hasRemaining()) {
                        consecutiveEmptyData = 0;
                    } else if (++consecutiveEmptyData > MAX_CONSECUTIVE_EMPTY_DATA) {
                        throw new Http2Error.ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, "more than "
                                + MAX_CONSECUTIVE_EMPTY_DATA + " consecutive empty DATA frames (RFC 9113 section 10.5)");
                    }
                    int padding = flowControlled - data.remaining();
                    if (!stream.receivedLocked(data, flowControlled, endStream)) {
                        throw new Http2Error.ConnectionError(ErrorCode.FLOW_CONTROL_ERROR,
                                "peer exceeded the receive window of stream " + streamId);
                    }
                    if (padding > 0) { // padding reaches no publisher: credited at once
                        streamCredit = stream.releaseLocked(padding);
                        connectionCredit = windows.credit(padding);
                    }
                }
            } finally {
                lock.unlock();
            }
            if (violated != null) {
                violated.resetMalformed(verdict.violation(), verdict.resetCode());
            }
            writeWindowUpdates(streamId, streamCredit, connectionCredit);
        }

        /**
         * RFC 9113 section 5.1: a stream this client never opened is idle (a server opens none: push is off), and a frame
         * on an idle stream other than HEADERS and PRIORITY is a connection PROTOCOL_ERROR; so is HEADERS, which only a
         * server's push could make legal. Streams it opened and has closed are not idle: their late frames are ignored.
         */
        private void requireOpened(String type, int streamId) throws Http2Error {
            if ((streamId & 1) == 0 || streamId > highestOpenedStreamId) {
                throw new Http2Error.ConnectionError(ErrorCode.PROTOCOL_ERROR, type + " on stream " + streamId
                        + ", which this client never opened (RFC 9113 section 5.1)");
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // what tests may read and where they may step in

    /**
     * This connection as its tests see it ({@link ConnectionProbe}): counters read under the lock, and the seams
     * where a test makes the peer's frames arrive at an exact moment. The seams are this object's fields; an unset
     * one costs the connection one volatile read.
     */
    final class Probe implements ConnectionProbe {
        private volatile Runnable afterHeadersWritten;
        private volatile Runnable afterGoAwayWritten;
        volatile Runnable beforeDataAdded;

        @Override
        public boolean isOpen() {
            return Http2BusConnection.this.isOpen();
        }

        @Override
        public void startStreamIdsAt(int nextId) {
            if ((nextId & 1) == 0 || nextId <= 0) {
                throw new IllegalArgumentException("client stream ids are odd and positive: " + nextId);
            }
            synchronized (frames) {
                if (nextId < nextStreamId) {
                    throw new IllegalArgumentException("ids only go up: next is " + nextStreamId);
                }
                nextStreamId = nextId;
            }
        }

        @Override
        public boolean ping(Duration timeout) throws InterruptedException {
            return keepalive.ping(timeout);
        }

        @Override
        public long streamsInUse() {
            return slots.inUse();
        }

        @Override
        public long peerMaxConcurrentStreams() {
            return slots.limit();
        }

        @Override
        public long slotWaiters() {
            return slots.waiting();
        }

        @Override
        public String socketDescription() {
            try {
                return dialed.tls().getSession().getProtocol() + " alpn=" + dialed.tls().getApplicationProtocol()
                        + " nodelay=" + dialed.tcp().getTcpNoDelay();
            } catch (java.net.SocketException e) {
                return "closed";
            }
        }

        @Override
        public long connectionBytesUncredited() {
            lock.lock();
            try {
                return windows.uncredited();
            } finally {
                lock.unlock();
            }
        }

        @Override
        public int streamsTracked() {
            lock.lock();
            try {
                return streams.size();
            } finally {
                lock.unlock();
            }
        }

        @Override
        public long readerWakeUps() {
            lock.lock();
            try {
                return readerWakeUps;
            } finally {
                lock.unlock();
            }
        }

        @Override
        public long writerWakeUps() {
            lock.lock();
            try {
                return writerWakeUps;
            } finally {
                lock.unlock();
            }
        }

        @Override
        public int inboundSegments(BusStream stream) {
            lock.lock();
            try {
                return ((Http2BusStream) stream).inboundSegmentsLocked();
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void afterResetWritten(BusStream stream, Runnable hook) {
            ((Http2BusStream) stream).afterResetWritten = hook;
        }

        @Override
        public void afterHeadersWritten(Runnable hook) {
            afterHeadersWritten = hook;
        }

        @Override
        public void beforeDataAdded(Runnable hook) {
            beforeDataAdded = hook;
        }

        @Override
        public void afterGoAwayWritten(Runnable hook) {
            afterGoAwayWritten = hook;
        }
    }
}
