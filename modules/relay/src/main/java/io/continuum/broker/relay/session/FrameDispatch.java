package io.continuum.broker.relay.session;

import java.nio.ByteBuffer;
import java.util.function.BiPredicate;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.protocol.BusProtocol;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameDecoder;
import io.continuum.broker.protocol.ProtocolException;
import io.continuum.broker.protocol.SessionLimits;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.session.SessionLife.State;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.StreamResetException;
import io.continuum.broker.relay.transport.TransportException;

/**
 * The session stream's one reader, from {@code hello} on (bus-protocol-v1.md sections 2, 4 and 5): its first state
 * waits for {@code welcome} (section 2's rules), then it hands each frame of the welcomed session to its job. A
 * {@code subscribe}'s session-level checks (rows 1-3: draining, duplicate id,
 * {@code max_streams}) run here, in the reader, so their decisions are race-free (the answers are written from
 * threads of their own: the reader never waits for the session stream); the rest of the open runs on the stream's
 * own thread. How the router ends its side decides the session's end reason.
 */
final class FrameDispatch {
    private static final EventLog LOG = EventLog.of(BusSession.class);

    private final SessionLife life;
    private final FrameDecoder<Frame.RouterFrame> decoder;
    private final SessionTimers timers;
    private final SessionStreams streams;
    private final Drain drain;
    private final RelayMetrics metrics;
    private final RouterFrameLog routerFrameLog;
    private volatile SessionLimits limits;
    /** The welcomed session's stream: its reset by the router decides the end reason, whoever notices first. */
    private volatile BusStream sessionStream;
    /** The session's own wiring once {@code welcome} is read: false when the attempt ended meanwhile. */
    private final BiPredicate<Frame.Welcome, BusStream> onWelcome;
    // the reader thread's own: welcome read and wired (frames are the session's), or the reading stopped
    private boolean welcomedHere;
    private boolean stopped;

    FrameDispatch(SessionLife life, FrameDecoder<Frame.RouterFrame> decoder, SessionTimers timers,
                  SessionStreams streams, Drain drain, RelayMetrics metrics, RouterFrameLog routerFrameLog,
                  BiPredicate<Frame.Welcome, BusStream> onWelcome) {
        this.life = life;
        this.decoder = decoder;
        this.timers = timers;
        this.streams = streams;
        this.drain = drain;
        this.metrics = metrics;
        this.routerFrameLog = routerFrameLog;
        this.onWelcome = onWelcome;
    }

    void welcomed(SessionLimits negotiated, BusStream stream) {
        limits = negotiated;
        sessionStream = stream;
    }

    /**
     * Reads the session stream from {@code hello} on, until the session ends: first the handshake's last state, the
     * frames up to {@code welcome} (section 2), then the welcomed session's (sections 4 and 5). One loop and one
     * decoder for both, so a chunk that holds {@code welcome} and frames behind it is read once, the negotiated
     * {@code max_frame_bytes} applying from the frame right after it.
     *
     * @param s               the session stream, its response head checked
     * @param welcomeDeadline the handshake's deadline for {@code welcome}, cancelled once it is read
     */
    void serve(BusStream s, SessionTimers.Watchdog welcomeDeadline) {
        try {
            read(s, welcomeDeadline);
        } finally {
            welcomeDeadline.cancel();
        }
    }

    private void read(BusStream s, SessionTimers.Watchdog welcomeDeadline) {
        while (!life.ended() && !stopped) {
            ByteBuffer chunk;
            try {
                chunk = s.read();
            } catch (TransportException e) {
                if (!welcomedHere) {
                    life.end(AttemptResult.FAILED, EndReason.CONNECT_FAILED, e.getMessage());
                } else if (!drain.completeIfRequestEnded()) {
                    endAfterReadFailure(e);
                }
                return;
            }
            if (chunk == null) {
                if (!welcomedHere) {
                    life.end(AttemptResult.FAILED, EndReason.CONNECT_FAILED,
                            "router ended the session stream before welcome");
                } else if (!drain.completeIfRequestEnded()) {
                    life.end(AttemptResult.WELCOMED, EndReason.ROUTER_CLOSED, "router ended the session stream");
                }
                return;
            }
            int n = chunk.remaining();
            try {
                // the sink form: every frame before a malformed one in the chunk is acted on first (decision 17),
                // and section 2 decides by the first frame before welcome that is not ignored
                decoder.decode(chunk, f -> {
                    if (life.ended() || stopped) {
                        return;
                    }
                    if (welcomedHere) {
                        dispatch(f);
                    } else {
                        beforeWelcome(f, s, welcomeDeadline);
                    }
                });
            } catch (ProtocolException e) {
                if (!life.ended() && !stopped) { // a frame before it (a terminal error, say) may have ended it
                    life.end(welcomedHere ? AttemptResult.WELCOMED : AttemptResult.REFUSED, EndReason.PROTOCOL_ERROR,
                            e.getMessage());
                }
                return;
            }
            s.release(n);
            // A chunk holds many frames now (the transport keeps bytes, not frames): the threads writing their
            // answers get a turn before the next one. A hint, not a wait: the reader never waits for the session
            // stream (RouterStopsReadingTest), so a router's flood still meets the bound on waiting answers.
            Thread.yield();
        }
    }

    /** Section 2: before {@code welcome}, unknown frames are ignored and anything else but an error refuses. */
    private void beforeWelcome(Frame.RouterFrame f, BusStream s, SessionTimers.Watchdog welcomeDeadline) {
        switch (f) {
            case Frame.Unknown u -> metrics.unknownFrame();
            case Frame.ErrorFrame err -> {
                metrics.routerError(err.code(), err.terminal());
                life.end(AttemptResult.REFUSED, EndReason.REFUSED, "router error before welcome: " + err.code().wire());
            }
            case Frame.Welcome w -> {
                if (w.protocolVersion() != BusProtocol.VERSION) {
                    life.end(AttemptResult.REFUSED, EndReason.PROTOCOL_ERROR,
                            "welcome names version " + w.protocolVersion() + ", not offered");
                    return;
                }
                if (!life.welcomeRead()) {
                    stopped = true; // a shutdown abandoned the attempt before this welcome was read
                    return;
                }
                welcomeDeadline.cancel();
                // sets the negotiated max_frame_bytes before this sink returns: the decoder applies it from the
                // frame right behind welcome, in this chunk too
                if (!onWelcome.test(w, s)) {
                    stopped = true;
                    return;
                }
                welcomedHere = true;
            }
            default -> life.end(AttemptResult.REFUSED, EndReason.PROTOCOL_ERROR, "'" + f.type() + "' before welcome");
        }
    }

    /** The bus connection closed (on the thread that noticed): after welcome, that ends the session. */
    void connectionClosed(TransportException cause) {
        State st = life.state();
        if ((st == State.WELCOMED || st == State.DRAINING) && !drain.completeIfRequestEnded()) {
            // After the router's graceful GOAWAY, the connection closing is the router's close (RFC 9113 6.8). So
            // is a close right behind the router's reset of the session stream: the reset came first on the wire,
            // and this callback (on the connection's reader) often runs before the session's reader wakes to it.
            BusStream s = sessionStream;
            if (s != null && s.failure() instanceof StreamResetException reset && reset.byPeer()) {
                life.end(AttemptResult.WELCOMED, EndReason.ROUTER_CLOSED, reset.getMessage());
            } else {
                life.end(AttemptResult.WELCOMED, drain.routerGoingAway() ? EndReason.ROUTER_CLOSED
                        : EndReason.CONNECTION_LOST, cause == null ? "connection closed" : cause.getMessage());
            }
        }
    }

    private void endAfterReadFailure(TransportException failure) {
        // A reset session stream is the router closing it (section 4 item 3), as is any end after its graceful
        // GOAWAY; anything else is the connection.
        EndReason reason = failure instanceof StreamResetException || drain.routerGoingAway()
                ? EndReason.ROUTER_CLOSED : EndReason.CONNECTION_LOST;
        life.end(AttemptResult.WELCOMED, reason, failure.getMessage());
    }

    private void dispatch(Frame frame) {
        timers.frameArrived();
        switch (frame) {
            case Frame.Heartbeat h -> {
                // liveness only
            }
            case Frame.Subscribe sub -> subscribe(sub);
            case Frame.Unsubscribe unsub -> streams.unsubscribe(unsub.streamId());
            case Frame.Drain d -> drain.byRouter(d);
            case Frame.ErrorFrame err -> {
                metrics.routerError(err.code(), err.terminal());
                if (err.terminal()) {
                    LOG.warn("router_error").field("terminal", true).field("code", err.code().wire()).log();
                    life.end(AttemptResult.WELCOMED, EndReason.TERMINAL_ERROR, "terminal error " + err.code().wire());
                } else {
                    routerFrameLog.nonTerminalError(err.code());
                }
            }
            case Frame.Unknown u -> {
                metrics.unknownFrame();
                LOG.debug("unknown_frame").field("type", u.type()).log();
            }
            case Frame.Welcome w -> life.end(AttemptResult.WELCOMED, EndReason.PROTOCOL_ERROR, "second welcome");
            default -> life.end(AttemptResult.WELCOMED, EndReason.PROTOCOL_ERROR,
                    "'" + frame.type() + "' is not a router frame");
        }
    }

    /** Section 5 rows 1-3; rows 4-11 run on the stream's own thread. */
    private void subscribe(Frame.Subscribe sub) {
        long id = sub.streamId();
        if (life.state() == State.DRAINING) {
            streams.refusedByReader(id, Code.DRAINING, "broker is draining");
            return;
        }
        if (streams.contains(id)) {
            streams.refusedByReader(id, Code.DUPLICATE_STREAM, "stream id already open or opening");
            return;
        }
        if (streams.size() >= limits.maxStreams()) {
            streams.refusedByReader(id, Code.TOO_MANY_STREAMS, "max_streams " + limits.maxStreams() + " reached");
            return;
        }
        streams.start(id, sub.target());
    }
}
