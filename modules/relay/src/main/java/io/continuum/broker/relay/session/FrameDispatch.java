package io.continuum.broker.relay.session;

import java.nio.ByteBuffer;
import java.util.List;

import io.continuum.broker.event.EventLog;
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
 * The welcomed session's reader (bus-protocol-v1.md sections 4 and 5): reads the session stream, decodes frames and
 * hands each to its job. A {@code subscribe}'s session-level checks (rows 1-3: draining, duplicate id,
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

    FrameDispatch(SessionLife life, FrameDecoder<Frame.RouterFrame> decoder, SessionTimers timers,
                  SessionStreams streams, Drain drain, RelayMetrics metrics, RouterFrameLog routerFrameLog) {
        this.life = life;
        this.decoder = decoder;
        this.timers = timers;
        this.streams = streams;
        this.drain = drain;
        this.metrics = metrics;
        this.routerFrameLog = routerFrameLog;
    }

    void welcomed(SessionLimits negotiated, BusStream stream) {
        limits = negotiated;
        sessionStream = stream;
    }

    /** Frames that came behind {@code welcome} in its chunk, then a malformed one if any, then the stream. */
    void serve(BusStream s, List<Frame.RouterFrame> rest, ProtocolException malformed) {
        for (Frame f : rest) {
            if (life.ended()) {
                return;
            }
            dispatch(f);
        }
        if (malformed != null) {
            life.end(AttemptResult.WELCOMED, EndReason.PROTOCOL_ERROR, malformed.getMessage());
            return;
        }
        serve(s);
    }

    private void serve(BusStream s) {
        while (!life.ended()) {
            ByteBuffer chunk;
            try {
                chunk = s.read();
            } catch (TransportException e) {
                if (!drain.completeIfRequestEnded()) {
                    endAfterReadFailure(e);
                }
                return;
            }
            if (chunk == null) {
                if (!drain.completeIfRequestEnded()) {
                    life.end(AttemptResult.WELCOMED, EndReason.ROUTER_CLOSED, "router ended the session stream");
                }
                return;
            }
            int n = chunk.remaining();
            try {
                // the sink form: every frame before a malformed one in the chunk is acted on first (decision 17)
                decoder.decode(chunk, f -> {
                    if (!life.ended()) {
                        dispatch(f);
                    }
                });
            } catch (ProtocolException e) {
                if (!life.ended()) { // a frame before it (a terminal error, say) may have ended the session
                    life.end(AttemptResult.WELCOMED, EndReason.PROTOCOL_ERROR, e.getMessage());
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
