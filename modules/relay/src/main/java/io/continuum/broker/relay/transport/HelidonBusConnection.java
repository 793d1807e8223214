package io.continuum.broker.relay.transport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.event.Severity;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Method;
import io.helidon.http.WritableHeaders;
import io.helidon.http.http2.Http2Headers;
import io.helidon.http.http2.Http2Settings;
import io.helidon.webclient.http2.Http2ClientConnection;
import io.helidon.webclient.http2.Http2ClientImpl;

/**
 * One bus connection on Helidon's HTTP/2 client. Helidon does the preface, SETTINGS exchange, HPACK both ways,
 * inbound frame dispatch into per-stream buffers, and PING/SETTINGS acknowledgements. This class does what
 * Helidon 4.5.0 gets wrong for long-lived full-duplex streams on one connection (see docs/architecture.md):
 * outbound flow control and DATA frames, inbound window replenishment, stream slots, death detection and
 * keepalive.
 *
 * <p>Locking: {@link #lock} guards every stream's state and both directions' window accounting; it is never
 * held while writing to the socket. The frame writer's lock is taken only for single frame writes.
 */
final class HelidonBusConnection implements BusConnection {
    private static final EventLog LOG = EventLog.of(HelidonBusConnection.class);
    private static final int MAX_PENDING_EVENTS = 64;

    final ReentrantLock lock = new ReentrantLock();
    private final BusEndpoint endpoint;
    private final TransportSettings settings;
    private final TlsDialer.Dialed dialed;
    private final Http2ClientImpl client;
    private final SerializedFrameWriter writer;
    private final StreamSlots slots;
    private final Map<Integer, HelidonBusStream> streams = new HashMap<>();
    private final Map<Integer, List<Consumer<HelidonBusStream>>> pendingEvents = new HashMap<>();
    private final List<Consumer<TransportException>> closeListeners = new CopyOnWriteArrayList<>();
    private final ReentrantLock openLock = new ReentrantLock();
    private final Condition keepaliveWake = lock.newCondition();
    private final CountDownLatch firstSettings = new CountDownLatch(1);
    private final AtomicBoolean closingLocally = new AtomicBoolean();
    private final String authority;

    // guarded by lock
    private long sendWindow = TransportSettings.STREAM_RECEIVE_WINDOW; // peer's connection window for our DATA
    private long peerInitialWindow = TransportSettings.STREAM_RECEIVE_WINDOW;
    private long received;          // DATA payload bytes received on the connection
    private long granted;           // connection window granted to the peer in total
    private long pendingConnectionCredit;
    private int highestRegistered;
    private final java.util.Set<Long> outstandingPings = new java.util.HashSet<>();
    private long pingSequence;
    private ConnectionLostException failure;

    private volatile Http2ClientConnection h2;
    private volatile BusSocketConnection socketConnection;
    private volatile Thread keepalive;
    /** The peer's SETTINGS_MAX_FRAME_SIZE: outbound DATA frames are at most this long. */
    private volatile int peerMaxFramePayload = Http2Frames.MAX_FRAME_PAYLOAD;

    HelidonBusConnection(BusEndpoint endpoint, TransportSettings settings, TlsDialer.Dialed dialed,
                         Http2ClientImpl client) throws IOException {
        this.endpoint = endpoint;
        this.settings = settings;
        this.slots = new StreamSlots(settings.localStreamLimit());
        this.dialed = dialed;
        this.client = client;
        this.writer = new SerializedFrameWriter(dialed.tls().getOutputStream(),
                e -> fail(ConnectionLostException.Reason.SOCKET, "write failed: " + e.getMessage(), e));
        String host = endpoint.host().indexOf(':') >= 0 ? "[" + endpoint.host() + "]" : endpoint.host();
        this.authority = endpoint.port() == 443 ? host : host + ":" + endpoint.port();
    }

    /**
     * Hands the socket to Helidon, waits for the peer's SETTINGS (the caller bounds the wait by closing the
     * socket), opens the connection receive window and starts the keepalive.
     */
    void start() throws IOException, BusConnectException {
        InboundFrameSniffer sniffer = new InboundFrameSniffer(new Events());
        socketConnection = new BusSocketConnection(dialed, dialed.tls().getInputStream(), sniffer,
                writer,
                cause -> fail(ConnectionLostException.Reason.SOCKET,
                        cause == null ? "peer closed the connection" : "read failed: " + cause.getMessage(), cause),
                () -> fail(closingLocally.get() ? ConnectionLostException.Reason.CLOSED_LOCALLY
                                : ConnectionLostException.Reason.PROTOCOL,
                        "HTTP/2 connection closed", null));
        try {
            h2 = Http2ClientConnection.create(client, socketConnection, true);
        } catch (RuntimeException e) {
            throw new BusConnectException(BusConnectException.Kind.HTTP2,
                    "HTTP/2 set-up failed: " + e.getMessage(), e);
        }
        if (firstSettings.getCount() != 0 || !isOpen()) {
            throw new BusConnectException(BusConnectException.Kind.HTTP2, "no SETTINGS from the peer", null);
        }
        long increment = (long) settings.connectionReceiveWindow() - TransportSettings.STREAM_RECEIVE_WINDOW;
        lock.lock();
        try {
            granted = settings.connectionReceiveWindow();
        } finally {
            lock.unlock();
        }
        if (increment > 0) {
            try {
                writer.writeOwnFrame(Http2Frames.windowUpdate(0, (int) increment));
            } catch (UncheckedIOException e) {
                throw new BusConnectException(BusConnectException.Kind.HTTP2, "connection window update failed", e);
            }
        }
        keepalive = Thread.ofVirtual().name("bus-keepalive-" + socketConnection.channelId()).start(this::keepaliveLoop);
    }

    @Override
    public BusStream open(StreamRequest request, Duration slotTimeout, java.util.function.BooleanSupplier commit)
            throws TransportException {
        throwIfFailed();
        slots.acquire(slotTimeout);
        long granted = System.nanoTime();
        boolean registered = false;
        try {
            Http2Headers headers = headers(request);
            openLock.lock();
            try {
                throwIfFailed();
                if (!commit.getAsBoolean()) {
                    return null; // abandoned while it waited: the slot goes back below, nothing was written
                }
                BusClientStream helidonStream = BusClientStream.create(h2, client, socketConnection.helidonSocket(), settings.readPollSlice());
                helidonStream.writeHeaders(headers, false);
                HelidonBusStream stream = register(helidonStream, granted);
                registered = true;
                return stream;
            } finally {
                openLock.unlock();
            }
        } catch (RuntimeException e) {
            throwIfFailed();
            // no cause attached: a header validation message could quote a header value
            fail(ConnectionLostException.Reason.PROTOCOL, "cannot open stream: " + e.getClass().getSimpleName(), null);
            throw failureOrNew();
        } finally {
            if (!registered) {
                slots.release();
            }
        }
    }

    @Override
    public boolean isOpen() {
        lock.lock();
        try {
            return failure == null;
        } finally {
            lock.unlock();
        }
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
    public void close() {
        if (!closingLocally.compareAndSet(false, true)) {
            return;
        }
        Http2ClientConnection connection = h2;
        if (connection != null && isOpen()) {
            try {
                connection.close(); // GOAWAY NO_ERROR, then Helidon closes its side: lands in fail(CLOSED_LOCALLY)
            } catch (RuntimeException e) {
                LOG.debug("helidon_close_failed").cause(e).log();
            }
        }
        fail(ConnectionLostException.Reason.CLOSED_LOCALLY, "closed", null);
    }

    /**
     * Sends a PING and waits for its acknowledgement: a round trip through the peer's frame processing.
     *
     * @param timeout how long to wait
     * @return whether the ACK arrived in time
     */
    boolean ping(Duration timeout) throws InterruptedException {
        long id;
        lock.lock();
        try {
            if (failure != null) {
                return false;
            }
            id = ++pingSequence;
            outstandingPings.add(id);
        } finally {
            lock.unlock();
        }
        long pingId = id;
        // written by a short-lived thread: a socket write blocked by a dead peer must not stop the deadline below
        Thread.ofVirtual().name("bus-ping").start(() -> {
            try {
                writer.writeOwnFrame(Http2Frames.ping(pingId, false));
            } catch (UncheckedIOException e) {
                // the connection is failing already
            }
        });
        long nanos = timeout.toNanos();
        lock.lock();
        try {
            while (outstandingPings.contains(pingId) && failure == null) {
                if (nanos <= 0) {
                    outstandingPings.remove(pingId);
                    return false;
                }
                nanos = keepaliveWake.awaitNanos(nanos);
            }
            return failure == null;
        } finally {
            lock.unlock();
        }
    }

    /** @return stream slots in use (for tests and metrics) */
    long streamsInUse() {
        return slots.inUse();
    }

    /**
     * @return DATA bytes received on the connection that neither a stream's release nor a reset or a dropped frame
     *         has credited back yet (for tests: zero once every stream is drained or gone)
     */
    long connectionBytesUncredited() {
        lock.lock();
        try {
            return received - (granted - settings.connectionReceiveWindow()) - pendingConnectionCredit;
        } finally {
            lock.unlock();
        }
    }

    /** @return opens parked waiting for a stream slot (for tests) */
    long slotWaiters() {
        return slots.waiting();
    }

    /** @return the peer's current MAX_CONCURRENT_STREAMS */
    long peerMaxConcurrentStreams() {
        return slots.limit();
    }

    /** @return the TLS socket's negotiated protocol and TCP_NODELAY, for tests: e.g. {@code TLSv1.3 nodelay=true} */
    String socketDescription() {
        try {
            return dialed.tls().getSession().getProtocol() + " alpn=" + dialed.tls().getApplicationProtocol()
                    + " nodelay=" + dialed.tcp().getTcpNoDelay();
        } catch (java.net.SocketException e) {
            return "closed";
        }
    }

    /** @return Helidon's connection (tests inspect its stream map) */
    Http2ClientConnection helidonConnection() {
        return h2;
    }

    SerializedFrameWriter writer() {
        return writer;
    }

    int peerMaxFramePayload() {
        return peerMaxFramePayload;
    }

    TransportSettings settings() {
        return settings;
    }

    // ---------------------------------------------------------------------------------------------------------
    // called by HelidonBusStream (lock held where noted)

    /** Lock held. @return the peer's connection send window */
    long sendWindowLocked() {
        return sendWindow;
    }

    /** Lock held. */
    void consumeSendWindowLocked(int n) {
        sendWindow -= n;
    }

    /** Lock held: credit connection window bytes that no stream will release; returns an increment to send, or 0. */
    int creditConnectionLocked(long bytes) {
        pendingConnectionCredit += bytes;
        if (pendingConnectionCredit >= settings.connectionWindowUpdateThreshold()) {
            int increment = (int) Math.min(Integer.MAX_VALUE, pendingConnectionCredit);
            pendingConnectionCredit -= increment;
            granted += increment;
            return increment;
        }
        return 0;
    }

    /** Lock held: the stream reached a terminal state with nothing left to write for it. */
    void streamFinishedLocked(HelidonBusStream stream) {
        streams.remove(stream.idInt());
        slots.release();
    }

    /**
     * Lock held: the stream reached a terminal state but its last frame (RST_STREAM, END_STREAM) is still to be
     * written; the caller calls {@link #releaseSlot()} once it is on the wire.
     */
    void streamForgottenLocked(HelidonBusStream stream) {
        streams.remove(stream.idInt());
    }

    /**
     * Gives a stream's slot back. Only after the stream's last frame is written: the peer counts the stream as
     * open until it reads that frame, so a stream opened in the freed slot must put its HEADERS behind it, or
     * the peer sees more concurrent streams than its MAX_CONCURRENT_STREAMS allows.
     */
    void releaseSlot() {
        slots.release();
    }

    ConnectionLostException failureLocked() {
        return failure;
    }

    void sendWindowUpdate(int streamId, int increment) {
        if (increment <= 0) {
            return;
        }
        try {
            writer.writeOwnFrame(Http2Frames.windowUpdate(streamId, increment));
        } catch (UncheckedIOException e) {
            // connection failure is reported through fail()
        }
    }

    // ---------------------------------------------------------------------------------------------------------

    private Http2Headers headers(StreamRequest request) {
        WritableHeaders<?> headers = WritableHeaders.create();
        for (Header header : request.headers()) {
            if (header.sensitive()) {
                // Helidon encodes sensitive=true never-indexed only with changing=true (with false it corrupts HPACK state)
                headers.add(HeaderValues.create(HeaderNames.create(header.name()), true, true, header.value()));
            } else {
                headers.add(HeaderValues.create(HeaderNames.create(header.name()), header.value()));
            }
        }
        if (!headers.contains(HeaderNames.USER_AGENT)) {
            headers.add(HeaderValues.create(HeaderNames.USER_AGENT, endpoint.userAgent()));
        }
        return Http2Headers.create(headers)
                .method(Method.create(request.method()))
                .path(request.path())
                .scheme("https")
                .authority(authority);
    }

    private HelidonBusStream register(BusClientStream helidonStream, long slotGrantedNanos) {
        int id = helidonStream.streamId();
        List<Consumer<HelidonBusStream>> early;
        HelidonBusStream stream;
        lock.lock();
        try {
            stream = new HelidonBusStream(this, helidonStream, id, peerInitialWindow, slotGrantedNanos);
            streams.put(id, stream);
            highestRegistered = Math.max(highestRegistered, id);
            early = pendingEvents.remove(id);
            pendingEvents.keySet().removeIf(k -> k <= highestRegistered);
            if (early != null) {
                early.forEach(e -> e.accept(stream));
            }
        } finally {
            lock.unlock();
        }
        return stream;
    }

    private void throwIfFailed() throws ConnectionLostException {
        lock.lock();
        try {
            if (failure != null) {
                throw failure;
            }
        } finally {
            lock.unlock();
        }
    }

    private ConnectionLostException failureOrNew() {
        lock.lock();
        try {
            return failure != null ? failure
                    : new ConnectionLostException(ConnectionLostException.Reason.PROTOCOL, "stream open failed", null);
        } finally {
            lock.unlock();
        }
    }

    /** Declares the connection dead: idempotent, from any thread. */
    void fail(ConnectionLostException.Reason reason, String message, Throwable cause) {
        if (closingLocally.get() && reason != ConnectionLostException.Reason.CLOSED_LOCALLY) {
            // our own close made the peer hang up or Helidon give up: still a local close
            reason = ConnectionLostException.Reason.CLOSED_LOCALLY;
            message = "closed";
        }
        ConnectionLostException exception = new ConnectionLostException(reason, message, cause);
        List<HelidonBusStream> open;
        lock.lock();
        try {
            if (failure != null) {
                return;
            }
            failure = exception;
            open = new ArrayList<>(streams.values());
            streams.clear();
            pendingEvents.clear();
            keepaliveWake.signalAll();
            for (HelidonBusStream stream : open) {
                stream.connectionLostLocked(exception);
            }
        } finally {
            lock.unlock();
        }
        writer.markDead();
        // closing TCP first unblocks writers stuck in a TLS write (SSLSocket.close would wait for their lock)
        TlsDialer.closeQuietly(dialed.tcp());
        TlsDialer.closeQuietly(dialed.tls());
        slots.fail(exception);
        for (HelidonBusStream stream : open) {
            stream.wakeHelidonReader();
        }
        Http2ClientConnection connection = h2;
        if (connection != null) {
            try {
                connection.close(); // stops Helidon's reader task; its writes are dropped by now
            } catch (RuntimeException e) {
                LOG.trace("helidon_close_after_failure_failed").cause(e).log();
            }
        }
        Thread k = keepalive;
        if (k != null && k != Thread.currentThread()) {
            k.interrupt();
        }
        firstSettings.countDown();
        for (Consumer<TransportException> listener : closeListeners) {
            try {
                listener.accept(exception);
            } catch (RuntimeException e) {
                LOG.warn("connection_close_listener_failed").cause(e).log();
            }
        }
        closeListeners.clear();
        LOG.at(reason == ConnectionLostException.Reason.CLOSED_LOCALLY ? Severity.DEBUG : Severity.INFO, "bus_connection_ended")
                .field("reason", reason.name().toLowerCase(java.util.Locale.ROOT)).field("detail", message).cause(cause).log();
    }

    private void keepaliveLoop() {
        try {
            while (true) {
                lock.lock();
                try {
                    long nanos = settings.keepaliveInterval().toNanos();
                    while (failure == null && nanos > 0) {
                        nanos = keepaliveWake.awaitNanos(nanos);
                    }
                    if (failure != null) {
                        return;
                    }
                } finally {
                    lock.unlock();
                }
                if (!ping(settings.keepaliveTimeout())) {
                    fail(ConnectionLostException.Reason.KEEPALIVE_TIMEOUT,
                            "no PING acknowledgement within " + settings.keepaliveTimeout().toMillis() + " ms", null);
                    return;
                }
            }
        } catch (InterruptedException e) {
            // closing
        }
    }

    /** Inbound frame events, on the connection's reader thread, before Helidon processes the same frames. */
    private final class Events implements InboundFrameSniffer.Listener {
        @Override
        public void settings(List<long[]> values) {
            lock.lock();
            try {
                for (long[] setting : values) {
                    if (setting[0] == Http2Frames.SETTINGS_MAX_CONCURRENT_STREAMS) {
                        slots.limit(setting[1]);
                    } else if (setting[0] == Http2Frames.SETTINGS_MAX_FRAME_SIZE) {
                        if (setting[1] >= Http2Frames.MAX_FRAME_PAYLOAD
                                && setting[1] <= Http2Frames.LARGEST_MAX_FRAME_PAYLOAD) {
                            peerMaxFramePayload = (int) setting[1]; // an invalid value is Helidon's to refuse
                        }
                    } else if (setting[0] == Http2Frames.SETTINGS_INITIAL_WINDOW_SIZE) {
                        long delta = setting[1] - peerInitialWindow;
                        peerInitialWindow = setting[1];
                        for (HelidonBusStream stream : streams.values()) {
                            stream.adjustSendWindowLocked(delta);
                        }
                    }
                }
            } finally {
                lock.unlock();
            }
            firstSettings.countDown();
        }

        @Override
        public void windowUpdate(int streamId, int increment) {
            lock.lock();
            try {
                if (streamId == 0) {
                    sendWindow += increment;
                    for (HelidonBusStream stream : streams.values()) {
                        stream.signalLocked();
                    }
                } else {
                    onStream(streamId, s -> s.adjustSendWindowLocked(increment));
                }
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void pingAck(long opaque) {
            lock.lock();
            try {
                if (outstandingPings.remove(opaque)) {
                    keepaliveWake.signalAll();
                }
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void goAway(int lastStreamId, long errorCode) {
            fail(ConnectionLostException.Reason.GOAWAY,
                    "peer sent GOAWAY " + Http2ErrorCodes.name(errorCode) + " (last stream " + lastStreamId + ")", null);
        }

        @Override
        public void rstStream(int streamId, long errorCode) {
            List<HelidonBusStream> reset = new ArrayList<>(1);
            lock.lock();
            try {
                onStream(streamId, s -> {
                    if (s.resetByPeerLocked(errorCode)) {
                        reset.add(s);
                    }
                });
            } finally {
                lock.unlock();
            }
            reset.forEach(HelidonBusStream::wakeHelidonReader);
        }

        @Override
        public void data(int streamId, int length, boolean endStream) {
            int connectionIncrement = 0;
            boolean violation = false;
            lock.lock();
            try {
                received += length;
                violation = received > granted;
                HelidonBusStream stream = streams.get(streamId);
                if (stream != null) {
                    violation |= !stream.receivedLocked(length, endStream);
                } else if (streamId > highestRegistered) {
                    onStream(streamId, s -> s.receivedLocked(length, endStream));
                } else {
                    // a stream that is already gone: nobody will release these bytes
                    connectionIncrement = creditConnectionLocked(length);
                }
            } finally {
                lock.unlock();
            }
            if (violation) {
                fail(ConnectionLostException.Reason.PROTOCOL, "peer exceeded the receive window", null);
                return;
            }
            sendWindowUpdate(0, connectionIncrement);
        }

        @Override
        public void headers(int streamId, boolean endStream) {
            lock.lock();
            try {
                onStream(streamId, s -> s.headersLocked(endStream));
            } finally {
                lock.unlock();
            }
        }

        /** Lock held: apply now, or later if the stream's HEADERS are being written right now. */
        private void onStream(int streamId, Consumer<HelidonBusStream> event) {
            HelidonBusStream stream = streams.get(streamId);
            if (stream != null) {
                event.accept(stream);
            } else if (streamId > highestRegistered && (streamId & 1) == 1) {
                List<Consumer<HelidonBusStream>> list = pendingEvents.computeIfAbsent(streamId, k -> new ArrayList<>());
                if (list.size() < MAX_PENDING_EVENTS) {
                    list.add(event);
                }
            }
        }
    }

    /** Creates Helidon's stream objects; Http2Settings are those Helidon uses to encode its own frames. */
    static Http2Settings emptySettings() {
        return Http2Settings.create();
    }

    /** Bounds the wait for the first SETTINGS (Helidon's own wait is a hard-coded 20 s). */
    boolean awaitFirstSettings(Duration timeout) throws InterruptedException {
        return firstSettings.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }
}
