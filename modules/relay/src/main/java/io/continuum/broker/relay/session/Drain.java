package io.continuum.broker.relay.session;

import java.time.Duration;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.session.SessionLife.State;

/**
 * The end of a welcomed session that lets its streams finish (bus-protocol-v1.md section 4 items 5-7): the
 * router's {@code drain} or a local shutdown. New subscribes are refused ({@code DRAINING}), open streams run until
 * they close or the deadline passes, then the request body ends and the router gets {@link #LINGER} to close its
 * side.
 * <pre>
 *   NONE --router drain--> ROUTER_DRAIN --shutdown--> SHUTDOWN
 *   NONE --router GOAWAY--> GOAWAY --shutdown--> SHUTDOWN
 *   NONE --shutdown--> SHUTDOWN
 * </pre>
 * The router's graceful GOAWAY (HTTP/2 NO_ERROR) is its drain at the connection's level: the streams it processed
 * run on, with {@code drain_deadline} as the bound a {@code drain} without {@code deadline_ms} gets, and the end
 * counts as {@code router_closed}. A shutdown always wins: it brings the deadline forward if earlier, and the end
 * counts as {@code shutdown}. One finisher thread per session ends it, with the reason the drain has at that
 * moment.
 */
final class Drain {
    private static final EventLog LOG = EventLog.of(BusSession.class);

    /** After END_STREAM on the session, how long the router gets to read what came before and close its side. */
    static final Duration LINGER = Duration.ofSeconds(2);

    enum Phase { NONE, ROUTER_DRAIN, GOAWAY, SHUTDOWN, STREAM_IDS }

    private final SessionLife life;
    private final SessionWriter writer;
    private final SessionStreams streams;
    private final Duration defaultDeadline;
    private final RouterFrameLog routerFrameLog;
    /** Written under the life's lock, together with {@link #untilNanos} and the session's DRAINING state. */
    private volatile Phase phase = Phase.NONE;
    /** When the drain under way ends at the latest: the earlier of the router's and the shutdown's deadline. */
    private volatile long untilNanos;
    private volatile Frame.Drain routerDrain;
    /** Set while a shutdown's {@code draining} is being written: END_STREAM waits for it, up to the deadline. */
    private volatile boolean drainingPending;
    /** The router's graceful GOAWAY came (before or after welcome). */
    private volatile boolean routerGoingAway;
    /** A shutdown that came after welcome was read, before the session counted it: started by afterWelcome. */
    private volatile PendingShutdown shutdownAfterWelcomeRead;

    /** A shutdown's {@code drain_deadline} and the moment (System.nanoTime) it ends. */
    private record PendingShutdown(Duration deadline, long untilNanos) {
    }

    Drain(RelayConfig config, SessionLife life, SessionWriter writer, SessionStreams streams,
          RouterFrameLog routerFrameLog) {
        this.routerFrameLog = routerFrameLog;
        this.defaultDeadline = config.drainDeadline();
        this.life = life;
        this.writer = writer;
        this.streams = streams;
    }

    /** The router's {@code drain}: its {@code deadline_ms}, or the configured {@code drain_deadline}. */
    void byRouter(Frame.Drain d) {
        Duration deadline = d.deadlineMs().isPresent() ? Duration.ofMillis(d.deadlineMs().getAsLong())
                : defaultDeadline;
        long until = System.nanoTime() + SessionLife.saturatedNanos(deadline);
        boolean started;
        life.lock().lock();
        try {
            started = life.advance(State.WELCOMED, State.DRAINING);
            if (!started && life.state() != State.DRAINING) {
                return;
            }
            routerDrain = d;
            if (started) {
                phase = Phase.ROUTER_DRAIN;
                untilNanos = until;
            } else if (until - untilNanos < 0) {
                // A drain (or shutdown) is already under way: the earlier deadline holds, the reason stays.
                untilNanos = until;
            }
            life.signal();
        } finally {
            life.lock().unlock();
        }
        routerFrameLog.drain(d.reason(), deadline.toMillis(), streams.size());
        if (started) {
            Thread.ofVirtual().name("session-drain").start(this::finish);
        }
    }

    /**
     * The router's graceful GOAWAY (on the connection's reader thread, in wire order: a {@code subscribe} behind it
     * finds the session draining). Before welcome it is remembered, and {@link #afterWelcome} starts the drain.
     */
    void byGoAway() {
        long until = System.nanoTime() + SessionLife.saturatedNanos(defaultDeadline);
        boolean started;
        life.lock().lock();
        try {
            routerGoingAway = true;
            started = life.advance(State.WELCOMED, State.DRAINING);
            if (started) {
                phase = Phase.GOAWAY;
                untilNanos = until;
                life.signal();
            }
        } finally {
            life.lock().unlock();
        }
        if (started) {
            LOG.info("router_going_away").field("deadline_ms", defaultDeadline.toMillis())
                    .field("open_streams", streams.size()).log();
            Thread.ofVirtual().name("session-goaway").start(this::finish);
        }
    }

    /**
     * The connection's stream ids are running out (a listener of the connection, on the thread that opened the stream
     * that crossed the reserve): the session drains as at shutdown ({@code draining}, subscribes refused, open streams
     * finish or reach {@code drain_deadline}), ends {@code drained}, and the loop reconnects at once on a new
     * connection. A drain already under way (the router's, a shutdown, a GOAWAY) ends the connection anyway.
     */
    void byStreamIdsRunningOut() {
        long until = System.nanoTime() + SessionLife.saturatedNanos(defaultDeadline);
        boolean started;
        life.lock().lock();
        try {
            started = life.advance(State.WELCOMED, State.DRAINING);
            if (started) {
                phase = Phase.STREAM_IDS;
                untilNanos = until;
                drainingPending = true;
                life.signal();
            }
        } finally {
            life.lock().unlock();
        }
        if (!started) {
            return;
        }
        LOG.info("stream_ids_drain").field("why", "stream_ids_exhausted").field("deadline_ms",
                defaultDeadline.toMillis()).field("open_streams", streams.size()).log();
        Thread.ofVirtual().name("session-draining").start(() -> {
            try {
                writer.sendBeforeEnd(new Frame.Draining(defaultDeadline.toMillis()));
            } finally {
                drainingPending = false;
                life.signal();
            }
        });
        Thread.ofVirtual().name("session-stream-ids").start(this::finish);
    }

    /** @return whether this session drained because its connection's stream ids ran out */
    boolean movedForStreamIds() {
        return phase == Phase.STREAM_IDS;
    }

    /**
     * The session was just welcomed: a shutdown that came once its welcome was read, or a GOAWAY that came while
     * it waited for welcome, starts the drain now.
     */
    void afterWelcome() {
        PendingShutdown pending = shutdownAfterWelcomeRead;
        if (pending != null) {
            byShutdown(pending.deadline(), pending.untilNanos());
        }
        if (routerGoingAway) {
            byGoAway();
        }
    }

    /** @return whether the router's graceful GOAWAY came: a connection or stream that ends after it is its close */
    boolean routerGoingAway() {
        return routerGoingAway;
    }

    /**
     * Local shutdown (SIGTERM/SIGINT, section 4 item 6) of a welcomed session: sends {@code draining} (unless the
     * request body has already ended) and drains; a router drain under way becomes a shutdown.
     *
     * @return false when there is no welcomed session to drain: the caller abandons the attempt
     */
    boolean byShutdown(Duration deadline) {
        return byShutdown(deadline, System.nanoTime() + SessionLife.saturatedNanos(deadline));
    }

    private boolean byShutdown(Duration deadline, long until) {
        boolean startFinisher;
        life.lock().lock();
        try {
            if (life.ended() || phase == Phase.SHUTDOWN) {
                return true;
            }
            State st = life.state();
            if (st == State.WELCOMED && life.advance(State.WELCOMED, State.DRAINING)) {
                startFinisher = true;
                untilNanos = until;
            } else if (st == State.DRAINING) {
                startFinisher = false;
                if (until - untilNanos < 0) {
                    untilNanos = until;
                }
            } else if (life.abandonBeforeWelcomeLocked()) {
                return false; // no welcome read yet: the caller abandons the attempt
            } else {
                // welcome was read and the session is about to count as welcomed: the router takes it for welcomed,
                // so it gets draining as any welcomed session does, right after the session counts it (afterWelcome)
                shutdownAfterWelcomeRead = new PendingShutdown(deadline, until);
                return true;
            }
            phase = Phase.SHUTDOWN;
            drainingPending = true;
            life.signal();
        } finally {
            life.lock().unlock();
        }
        LOG.info("shutdown_drain").field("deadline_ms", deadline.toMillis()).field("open_streams", streams.size())
                .log();
        // draining on a thread of its own: a router that stopped reading its session stream holds the writer, and
        // the deadline must run all the same (R-BEH 8). The finisher ends the request body after it, or at the
        // deadline without it; the session's end then fails the blocked write.
        Thread.ofVirtual().name("session-draining").start(() -> {
            try {
                writer.sendBeforeEnd(new Frame.Draining(deadline.toMillis()));
            } finally {
                drainingPending = false;
                life.signal();
            }
        });
        if (startFinisher) {
            Thread.ofVirtual().name("session-shutdown").start(this::finish);
        }
        return true;
    }

    /**
     * The router ended its side (closed the connection or the session stream). After the drain's END_STREAM that
     * completes the drain, whichever of the connection's listener and the session's reader notices first.
     *
     * @return false when the request body has not ended: the router's close is then the session's end
     */
    boolean completeIfRequestEnded() {
        if (!writer.requestEnded()) {
            return false;
        }
        endDrained();
        return true;
    }

    /** The router's {@code drain}, once one came. */
    Frame.Drain routerDrain() {
        return routerDrain;
    }

    /**
     * The one drain finisher of a session: waits until all streams closed and their answers are written, or the
     * deadline passes (re-read on every change, since a shutdown may bring it forward), ends the request body,
     * gives the router {@link #LINGER} to close its side, then ends the session with the drain's reason as it is
     * at that moment.
     */
    private void finish() {
        life.lock().lock();
        try {
            while (!life.ended() && (!streams.settled() || drainingPending)) {
                long left = untilNanos - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                life.awaitChange(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            life.lock().unlock();
        }
        if (life.ended()) {
            return;
        }
        // Under the writer's lock, so a shutdown's draining frame goes before END_STREAM or not at all.
        boolean ended = writer.endRequest(LINGER);
        // Closing a TCP connection with unread bytes in flight can reset it and lose what the router has not read
        // yet (the last stream_closed frames, END_STREAM): give the router a moment to read them and end its side,
        // which ends the session (as drained/shutdown) by itself.
        if (ended) {
            life.awaitUntil(life::ended, LINGER);
        }
        endDrained();
    }

    private void endDrained() {
        switch (phase) {
            case SHUTDOWN -> life.end(AttemptResult.WELCOMED, EndReason.SHUTDOWN, "shutdown");
            case GOAWAY -> life.end(AttemptResult.WELCOMED, EndReason.ROUTER_CLOSED,
                    "router sent GOAWAY and its streams ended");
            case STREAM_IDS -> life.end(AttemptResult.WELCOMED, EndReason.DRAINED,
                    "stream ids running out: moving to a new connection");
            default -> life.end(AttemptResult.WELCOMED, EndReason.DRAINED, "drained");
        }
    }
}
