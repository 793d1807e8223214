package io.continuum.broker.relay.transport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.event.Severity;
import io.helidon.http.http2.Http2Headers;
import io.helidon.webclient.http2.Http2ClientConnection;
import io.helidon.webclient.http2.Http2ClientImpl;

/**
 * One bus connection on Helidon's HTTP/2 client. Helidon does the preface, SETTINGS exchange, HPACK both ways,
 * inbound frame dispatch into per-stream buffers, and PING/SETTINGS acknowledgements. This class does what
 * Helidon 4.5.0 gets wrong for long-lived full-duplex streams on one connection (see docs/architecture.md):
 * outbound flow control and DATA frames, inbound window replenishment, stream slots, death detection and
 * keepalive.
 *
 * <p>Its parts: {@link ConnectionWindows} (connection-level flow control both ways), {@link StreamTable} (live
 * streams), {@link StreamSlots}, {@link Keepalive}, {@link InboundEvents} (what the sniffer reports, applied) and
 * the {@link SerializedFrameWriter}.
 *
 * <p>Locking: {@link #lock} guards every stream's state, the stream table and both directions' window accounting;
 * it is never held while writing to the socket. The frame writer's lock is taken only for frame writes.
 */
final class HelidonBusConnection implements BusConnection, Keepalive.Host, ConnectionProbe {
    private static final EventLog LOG = EventLog.of(HelidonBusConnection.class);
    final ReentrantLock lock = new ReentrantLock();
    private final BusEndpoint endpoint;
    private final TransportSettings settings;
    private final TlsDialer.Dialed dialed;
    private final Http2ClientImpl client;
    private final SerializedFrameWriter writer;
    private final StreamSlots slots;
    private final StreamTable streams = new StreamTable();
    private final ConnectionWindows windows;
    private final Keepalive keepalive;
    private final List<Consumer<TransportException>> closeListeners = new CopyOnWriteArrayList<>();
    private final ReentrantLock openLock = new ReentrantLock();
    /**
     * Test seam: runs on the opening thread between a stream's HEADERS write and its registration, so a test can
     * make the peer's frames for it arrive exactly then.
     */
    volatile Runnable afterHeadersWritten;
    private final CountDownLatch firstSettings = new CountDownLatch(1);
    private final AtomicBoolean closingLocally = new AtomicBoolean();
    private final String authority;

    private ConnectionLostException failure; // guarded by lock

    private volatile Http2ClientConnection h2;
    private volatile BusSocketConnection socketConnection;

    HelidonBusConnection(BusEndpoint endpoint, TransportSettings settings, TlsDialer.Dialed dialed,
                         Http2ClientImpl client) throws IOException {
        this.endpoint = endpoint;
        this.settings = settings;
        this.slots = new StreamSlots(settings.localStreamLimit());
        this.windows = new ConnectionWindows(settings);
        this.keepalive = new Keepalive(this, settings);
        this.dialed = dialed;
        this.client = client;
        this.writer = new SerializedFrameWriter(dialed.tls().getOutputStream(),
                e -> fail(ConnectionLostException.Reason.SOCKET, "write failed: " + e.getMessage(), e),
                () -> slots.inUseNow() > 2); // the session stream and at least two data streams
        String host = endpoint.host().indexOf(':') >= 0 ? "[" + endpoint.host() + "]" : endpoint.host();
        this.authority = endpoint.port() == 443 ? host : host + ":" + endpoint.port();
    }

    /**
     * Hands the socket to Helidon, waits for the peer's SETTINGS (the caller bounds the wait by closing the
     * socket), opens the connection receive window and starts the keepalive.
     */
    void start() throws IOException, BusConnectException {
        InboundFrameSniffer sniffer = new InboundFrameSniffer(new InboundEvents(this));
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
            windows.opened();
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
        keepalive.start("bus-keepalive-" + socketConnection.channelId());
    }

    @Override
    public BusStream open(StreamRequest request, Duration slotTimeout, java.util.function.BooleanSupplier commit)
            throws TransportException {
        throwIfFailed();
        slots.acquire(slotTimeout);
        long granted = System.nanoTime();
        boolean registered = false;
        try {
            Http2Headers headers = HelidonHeaders.request(request, authority, endpoint.userAgent());
            openLock.lock();
            try {
                throwIfFailed();
                if (!commit.getAsBoolean()) {
                    return null; // abandoned while it waited: the slot goes back below, nothing was written
                }
                lock.lock();
                try {
                    streams.openingStarted();
                } finally {
                    lock.unlock();
                }
                BusClientStream helidonStream = BusClientStream.create(h2, client, socketConnection.helidonSocket(), settings.readPollSlice());
                helidonStream.writeHeaders(headers, false);
                Runnable hook = afterHeadersWritten;
                if (hook != null) {
                    hook.run();
                }
                HelidonBusStream stream = register(helidonStream, granted);
                registered = true;
                return stream;
            } finally {
                if (!registered) {
                    lock.lock();
                    try {
                        streams.openingFailed();
                    } finally {
                        lock.unlock();
                    }
                }
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
    @Override
    public boolean ping(Duration timeout) throws InterruptedException {
        return keepalive.ping(timeout);
    }

    /** @return stream slots in use (for tests and metrics) */
    @Override
    public long streamsInUse() {
        return slots.inUse();
    }

    /**
     * @return DATA bytes received on the connection that neither a stream's release nor a reset or a dropped frame
     *         has credited back yet (for tests: zero once every stream is drained or gone)
     */
    @Override
    public long connectionBytesUncredited() {
        lock.lock();
        try {
            return windows.uncredited();
        } finally {
            lock.unlock();
        }
    }

    /** @return opens parked waiting for a stream slot (for tests) */
    @Override
    public long slotWaiters() {
        return slots.waiting();
    }

    /** @return the peer's current MAX_CONCURRENT_STREAMS */
    @Override
    public long peerMaxConcurrentStreams() {
        return slots.limit();
    }

    /** @return the TLS socket's negotiated protocol and TCP_NODELAY, for tests: e.g. {@code TLSv1.3 nodelay=true} */
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
    public int streamsTracked() {
        lock.lock();
        try {
            return streams.all().size(); // Helidon's own map: ScaleAndThroughputTest reads it
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void afterResetWritten(BusStream stream, Runnable hook) {
        ((HelidonBusStream) stream).afterResetWritten = hook;
    }

    @Override
    public void afterHeadersWritten(Runnable hook) {
        afterHeadersWritten = hook;
    }

    @Override
    public void beforeDataAdded(Runnable hook) {
        writer().beforeDataLock = hook;
    }

    /** @return Helidon's connection (tests inspect its stream map) */
    Http2ClientConnection helidonConnection() {
        return h2;
    }

    SerializedFrameWriter writer() {
        return writer;
    }


    TransportSettings settings() {
        return settings;
    }

    // ---------------------------------------------------------------------------------------------------------
    // called by HelidonBusStream (lock held where noted)

    /** Lock held. @return the peer's connection send window */
    long sendWindowLocked() {
        return windows.sendWindow();
    }

    /** Lock held. */
    void consumeSendWindowLocked(int n) {
        windows.consumeSendWindow(n);
    }

    /**
     * Lock held: the peer's connection window grew, by its WINDOW_UPDATE or by DATA taken from it but never sent;
     * every stream waiting for window checks again.
     */
    void growSendWindowLocked(int increment) {
        windows.peerUpdate(increment);
        for (HelidonBusStream stream : streams.all()) {
            stream.signalLocked();
        }
    }

    /** Lock held: credits bytes released or never to be released; returns an increment to send now, or 0. */
    int creditConnectionLocked(long bytes) {
        return windows.credit(bytes);
    }

    /** Lock held. */
    ConnectionWindows windowsLocked() {
        return windows;
    }

    /** Lock held. */
    StreamTable streamsLocked() {
        return streams;
    }

    StreamSlots slots() {
        return slots;
    }

    Keepalive keepalive() {
        return keepalive;
    }

    void settingsArrived() {
        firstSettings.countDown();
    }


    /** Lock held: the stream reached a terminal state with nothing left to write for it. */
    void streamFinishedLocked(HelidonBusStream stream) {
        streams.remove(stream);
        slots.release();
    }

    /**
     * Lock held: the stream reached a terminal state but its last frame (RST_STREAM, END_STREAM) is still to be
     * written; the caller calls {@link #releaseSlot()} once it is on the wire.
     */
    void streamForgottenLocked(HelidonBusStream stream) {
        streams.remove(stream);
    }

    /**
     * Gives a stream's slot back. Only after the stream's last frame is written: the peer counts the stream as
     * open until it reads that frame, so a stream opened in the freed slot must put its HEADERS behind it, or
     * the peer sees more concurrent streams than its MAX_CONCURRENT_STREAMS allows.
     */
    void releaseSlot() {
        slots.release();
    }

    @Override
    public ConnectionLostException failureLocked() {
        return failure;
    }

    @Override
    public ReentrantLock lock() {
        return lock;
    }

    @Override
    public void writePing(long opaque) {
        writer.writeOwnFrame(Http2Frames.ping(opaque, false));
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

    private HelidonBusStream register(BusClientStream helidonStream, long slotGrantedNanos) {
        HelidonBusStream stream;
        DataVerdict violation;
        lock.lock();
        try {
            stream = new HelidonBusStream(this, helidonStream, helidonStream.streamId(),
                    windows.peerInitialWindow(), slotGrantedNanos);
            violation = streams.register(stream);
        } finally {
            lock.unlock();
        }
        if (violation != null) {
            // the peer sent DATA its stream did not allow while the stream's HEADERS were being written: see
            // InboundEvents.admitData
            stream.resetMalformedResponse(violation);
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
    @Override
    public void fail(ConnectionLostException.Reason reason, String message, Throwable cause) {
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
            open = streams.clear();
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
        keepalive.stop();
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
}
