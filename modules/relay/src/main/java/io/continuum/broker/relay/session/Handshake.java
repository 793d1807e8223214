package io.continuum.broker.relay.session;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.continuum.broker.protocol.BusProtocol;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameDecoder;
import io.continuum.broker.protocol.ProtocolException;
import io.continuum.broker.protocol.SessionLimits;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.session.SessionLife.State;
import io.continuum.broker.relay.transport.BusConnectException;
import io.continuum.broker.relay.transport.BusConnection;
import io.continuum.broker.relay.transport.BusConnector;
import io.continuum.broker.relay.transport.BusEndpoint;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.ResponseHead;
import io.continuum.broker.relay.transport.TransportException;

/**
 * A session attempt up to {@code welcome} (bus-protocol-v1.md section 2): connect, open the session stream with
 * {@code hello} right behind its HEADERS, check the response head, then read frames until {@code welcome}.
 * {@code bus_connect_timeout} bounds TCP, TLS and HTTP/2 set-up up to sending {@code hello}; the response head
 * and {@code welcome} then get their own {@code bus_connect_timeout}, counted from {@code hello}.
 * <pre>
 *   CONNECTING --connected--> AWAITING_WELCOME --welcome--> (WELCOMED: the session's to serve)
 *   either --failure, refusal, deadline, shutdown--> ENDED
 * </pre>
 * A shutdown during the connect interrupts it ({@link #abandon}); none ever sends {@code hello} after it.
 */
final class Handshake {
    /** How the attempt went: ended (the end is on {@link SessionLife}), or welcomed with what came behind. */
    sealed interface Result {
    }

    /** The attempt ended; {@link SessionLife#end()} says how. */
    record Ended() implements Result {
    }

    /**
     * {@code welcome} arrived.
     *
     * @param stream    the session stream, to be read on
     * @param welcome   the router's welcome, of this broker's protocol version
     * @param rest      frames that came in the same chunk right behind it, to be served in order
     * @param malformed a malformed frame after those, which ends the welcomed session; or null
     */
    record Welcomed(BusStream stream, Frame.Welcome welcome, List<Frame.RouterFrame> rest, ProtocolException malformed)
            implements Result {
    }

    private static final Result ENDED = new Ended();

    private final RelayConfig config;
    private final BusEndpoint endpoint;
    private final BusConnector connector;
    private final SessionHeaders headers;
    private final SessionLife life;
    private final SessionWriter writer;
    private final FrameDecoder<Frame.RouterFrame> decoder;
    private final RelayMetrics metrics;
    private final Consumer<TransportException> onConnectionClosed;
    private final Runnable onGoAway;
    /** The thread inside {@link BusConnector#connect} while the attempt connects; guarded by the life's lock. */
    private Thread connectingThread;
    private volatile Duration retryAfter;
    private volatile long startedNanos;

    Handshake(RelayConfig config, BusEndpoint endpoint, BusConnector connector, SessionHeaders headers,
              SessionLife life, SessionWriter writer, FrameDecoder<Frame.RouterFrame> decoder, RelayMetrics metrics,
              Consumer<TransportException> onConnectionClosed, Runnable onGoAway) {
        this.config = config;
        this.endpoint = endpoint;
        this.connector = connector;
        this.headers = headers;
        this.life = life;
        this.writer = writer;
        this.decoder = decoder;
        this.metrics = metrics;
        this.onConnectionClosed = onConnectionClosed;
        this.onGoAway = onGoAway;
    }

    Result run() {
        startedNanos = System.nanoTime(); // for the connect-to-welcome histogram, not a deadline
        long connectDeadline = startedNanos + config.busConnectTimeout().toNanos();
        BusConnection c;
        try {
            c = connectUnlessEnded();
        } catch (BusConnectException e) {
            return failed(AttemptResult.FAILED, EndReason.CONNECT_FAILED, e.getMessage());
        }
        if (c == null) {
            return ENDED;
        }
        life.connection(c);
        if (life.ended()) {
            // A shutdown came while connecting and saw no connection to close: nothing more is sent.
            c.close();
            return ENDED;
        }
        c.onClose(onConnectionClosed);
        c.onGoAway(onGoAway);
        life.set(State.AWAITING_WELCOME);
        BusStream s;
        // Section 2: hello goes with the session request. A router whose windows stay shut (initial window 0)
        // would hold its write forever; bus_connect_timeout bounds it, as it bounds the rest of the set-up.
        SessionTimers.Watchdog helloDeadline = SessionTimers.Watchdog.start(
                System.nanoTime() + config.busConnectTimeout().toNanos(), () -> life.end(AttemptResult.FAILED,
                        EndReason.CONNECT_FAILED, "hello not written within " + config.busConnectTimeout()));
        try {
            s = writer.open(c, headers.session(), remaining(connectDeadline), hello());
        } catch (TransportException e) {
            return failed(AttemptResult.FAILED, EndReason.CONNECT_FAILED, e.getMessage());
        } finally {
            helloDeadline.cancel();
        }
        if (s == null) {
            return ENDED; // section 4 item 6: no hello after a shutdown; the attempt is abandoned
        }
        long welcomeDeadline = System.nanoTime() + config.busConnectTimeout().toNanos();
        ResponseHead head;
        try {
            head = s.awaitResponseHead(remaining(welcomeDeadline));
        } catch (TimeoutException e) {
            return failed(AttemptResult.FAILED, EndReason.CONNECT_FAILED,
                    "no response head within " + config.busConnectTimeout());
        } catch (TransportException e) {
            return failed(AttemptResult.FAILED, EndReason.CONNECT_FAILED, e.getMessage());
        }
        Optional<HeadCheck.Refusal> refusal = HeadCheck.check(head);
        if (refusal.isPresent()) {
            retryAfter = refusal.get().retryAfter();
            return failed(AttemptResult.REFUSED, refusal.get().reason(), refusal.get().detail());
        }
        SessionTimers.Watchdog deadline = SessionTimers.Watchdog.start(welcomeDeadline, () -> life.end(
                AttemptResult.FAILED, EndReason.CONNECT_FAILED, "no welcome within " + config.busConnectTimeout()));
        try {
            return awaitWelcome(s);
        } finally {
            deadline.cancel();
        }
    }

    private Frame.Hello hello() {
        return new Frame.Hello(List.of(BusProtocol.VERSION), Frame.Hello.ROLE_BROKER, config.clientId(),
                config.kubernetesNamespace(), config.dynamoNamespaces(), headers.userAgent());
    }

    /**
     * Section 2 decides by the first frame that is not ignored, in order: what the router sent before a malformed
     * frame (an error, a welcome) decides first; a malformed frame decides only when nothing before it did.
     */
    private Result awaitWelcome(BusStream s) {
        while (!life.ended()) {
            ByteBuffer chunk;
            try {
                chunk = s.read();
            } catch (TransportException e) {
                return failed(AttemptResult.FAILED, EndReason.CONNECT_FAILED, e.getMessage());
            }
            if (chunk == null) {
                return failed(AttemptResult.FAILED, EndReason.CONNECT_FAILED,
                        "router ended the session stream before welcome");
            }
            int n = chunk.remaining();
            List<Frame.RouterFrame> frames = new ArrayList<>(2);
            ProtocolException malformed = null;
            try {
                // The negotiated max_frame_bytes applies from the frame right behind welcome, even in the same
                // chunk: the sink sets it before the decoder reads that frame's prefix.
                decoder.decode(chunk, f -> {
                    frames.add(f);
                    if (f instanceof Frame.Welcome w && w.protocolVersion() == BusProtocol.VERSION) {
                        decoder.setMaxFrameBytes(SessionLimits.negotiate(w).maxFrameBytes());
                    }
                });
            } catch (ProtocolException e) {
                malformed = e;
            }
            s.release(n);
            for (int i = 0; i < frames.size(); i++) {
                Frame f = frames.get(i);
                switch (f) {
                    case Frame.Unknown u -> metrics.unknownFrame();
                    case Frame.ErrorFrame err -> {
                        metrics.routerError(err.code(), err.terminal());
                        return failed(AttemptResult.REFUSED, EndReason.REFUSED,
                                "router error before welcome: " + err.code().wire());
                    }
                    case Frame.Welcome w -> {
                        if (w.protocolVersion() != BusProtocol.VERSION) {
                            return failed(AttemptResult.REFUSED, EndReason.PROTOCOL_ERROR,
                                    "welcome names version " + w.protocolVersion() + ", not offered");
                        }
                        if (!life.welcomeRead()) {
                            return ENDED; // a shutdown abandoned the attempt before this welcome was read
                        }
                        return new Welcomed(s, w, List.copyOf(frames.subList(i + 1, frames.size())), malformed);
                    }
                    default -> {
                        return failed(AttemptResult.REFUSED, EndReason.PROTOCOL_ERROR,
                                "'" + f.type() + "' before welcome");
                    }
                }
            }
            if (malformed != null) {
                return failed(AttemptResult.REFUSED, EndReason.PROTOCOL_ERROR, malformed.getMessage());
            }
        }
        return ENDED;
    }

    /** Time since the attempt started, for the connect-to-welcome histogram. */
    Duration elapsed() {
        return Duration.ofNanos(System.nanoTime() - startedNanos);
    }

    /** A 503's {@code Retry-After}, or null. */
    Duration retryAfter() {
        return retryAfter;
    }

    /**
     * A shutdown before {@code welcome}: ends the attempt as {@code shutdown} and stops a connect in progress. The
     * connector honours an interrupt: it closes the socket (ending a TLS handshake the router never answers) and
     * returns at once, instead of holding the exit for {@code bus_connect_timeout}.
     */
    void abandon() {
        State st = life.state();
        life.end(st == State.CONNECTING || st == State.AWAITING_WELCOME ? AttemptResult.FAILED : AttemptResult.WELCOMED,
                EndReason.SHUTDOWN, "shutdown");
        life.lock().lock();
        try {
            Thread t = connectingThread;
            if (t != null) {
                t.interrupt();
            }
        } finally {
            life.lock().unlock();
        }
    }

    /** Connects unless the attempt already ended; a shutdown during the connect interrupts it (null then). */
    private BusConnection connectUnlessEnded() throws BusConnectException {
        life.lock().lock();
        try {
            if (life.ended()) {
                return null;
            }
            connectingThread = Thread.currentThread();
        } finally {
            life.lock().unlock();
        }
        try {
            return connector.connect(endpoint);
        } catch (BusConnectException e) {
            if (life.ended()) {
                return null;
            }
            throw e;
        } finally {
            life.lock().lock();
            try {
                connectingThread = null;
                if (life.ended()) {
                    Thread.interrupted(); // the interrupt was meant for the connect only
                }
            } finally {
                life.lock().unlock();
            }
        }
    }

    private Result failed(AttemptResult result, EndReason reason, String detail) {
        life.end(result, reason, detail);
        return ENDED;
    }

    private static Duration remaining(long deadlineNanos) {
        return Duration.ofNanos(Math.max(1, deadlineNanos - System.nanoTime()));
    }
}
