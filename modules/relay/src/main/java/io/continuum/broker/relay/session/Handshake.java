package io.continuum.broker.relay.session;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.continuum.broker.protocol.BusProtocol;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.session.SessionLife.State;
import io.continuum.broker.relay.transport.BusConnectException;
import io.continuum.broker.relay.transport.BusConnection;
import io.continuum.broker.relay.transport.BusConnector;
import io.continuum.broker.relay.transport.BusEndpoint;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.ResponseHead;
import io.continuum.broker.relay.transport.TransportException;

/**
 * A session attempt up to the session stream's response head (bus-protocol-v1.md section 2): connect, open the
 * session stream with {@code hello} right behind its HEADERS, check the response head. {@code bus_connect_timeout}
 * bounds TCP, TLS and HTTP/2 set-up up to sending {@code hello}; the response head and {@code welcome} then get
 * their own {@code bus_connect_timeout}, counted from {@code hello}. The frames up to {@code welcome} are read by
 * the session stream's one reader, {@link FrameDispatch}, whose first state is the wait for it.
 * <pre>
 *   CONNECTING --connected--> AWAITING_WELCOME --response head 200--> (the reader waits for welcome)
 *   either --failure, refusal, deadline, shutdown--> ENDED
 * </pre>
 * A shutdown during the connect interrupts it ({@link #abandon}); none ever sends {@code hello} after it.
 */
final class Handshake {
    /** How the attempt went: ended (the end is on {@link SessionLife}), or the session stream answered 200. */
    sealed interface Result {
    }

    /** The attempt ended; {@link SessionLife#end()} says how. */
    record Ended() implements Result {
    }

    /**
     * The session stream is open and its response head said 200: {@code welcome} is next.
     *
     * @param stream          the session stream, to be read on
     * @param welcomeDeadline ends the attempt unless {@code welcome} is read in time; the reader cancels it
     */
    record Opened(BusStream stream, SessionTimers.Watchdog welcomeDeadline) implements Result {
    }

    private static final Result ENDED = new Ended();

    private final RelayConfig config;
    private final BusEndpoint endpoint;
    private final BusConnector connector;
    private final SessionHeaders headers;
    private final SessionLife life;
    private final SessionWriter writer;
    private final Consumer<TransportException> onConnectionClosed;
    private final Runnable onGoAway;
    /** The thread inside {@link BusConnector#connect} while the attempt connects; guarded by the life's lock. */
    private Thread connectingThread;
    private volatile Duration retryAfter;
    private volatile long startedNanos;

    Handshake(RelayConfig config, BusEndpoint endpoint, BusConnector connector, SessionHeaders headers,
              SessionLife life, SessionWriter writer, Consumer<TransportException> onConnectionClosed,
              Runnable onGoAway) {
        this.config = config;
        this.endpoint = endpoint;
        this.connector = connector;
        this.headers = headers;
        this.life = life;
        this.writer = writer;
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
        return new Opened(s, SessionTimers.Watchdog.start(welcomeDeadline, () -> life.end(
                AttemptResult.FAILED, EndReason.CONNECT_FAILED, "no welcome within " + config.busConnectTimeout())));
    }

    private Frame.Hello hello() {
        return new Frame.Hello(List.of(BusProtocol.VERSION), Frame.Hello.ROLE_BROKER, config.clientId(),
                config.kubernetesNamespace(), config.dynamoNamespaces(), headers.userAgent());
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
