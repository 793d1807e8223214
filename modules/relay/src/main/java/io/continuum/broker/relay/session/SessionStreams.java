package io.continuum.broker.relay.session;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.SessionLimits;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.relay.stream.ChunkQueue;
import io.continuum.broker.relay.stream.DataStream;
import io.continuum.broker.relay.stream.PublisherReads;
import io.continuum.broker.relay.stream.SessionBudget;
import io.continuum.broker.relay.stream.StreamContext;
import io.continuum.broker.relay.stream.TargetDialer;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.TransportException;

/**
 * One session's table of data streams, keyed by stream id, and the {@link StreamContext} its streams run in. A
 * stream is in the table from its {@code subscribe} until it ended; it reports to the broker-wide
 * {@link StreamRegistry} (status page, gauges, refusal log) only through this table.
 */
final class SessionStreams implements StreamContext {
    private static final EventLog LOG = EventLog.of(BusSession.class);

    private final SessionLife life;
    private final SessionWriter writer;
    private final SessionHeaders headers;
    private final TargetDialer dialer;
    private final RelayConfig.Timeouts timeouts;
    private final RelayMetrics metrics;
    private final StreamRegistry registry;
    private final SessionBudget budget;
    private final PublisherReads reads;
    private final Map<Long, DataStream> streams = new ConcurrentHashMap<>();
    /** Streams out of the table whose answer is not written yet: a drain that finds no stream waits for them. */
    private final AtomicInteger answersInFlight = new AtomicInteger();
    private final AtomicInteger openStreams = new AtomicInteger();
    private volatile SessionLimits limits;

    SessionStreams(SessionLife life, SessionWriter writer, SessionHeaders headers, TargetDialer dialer,
                   RelayConfig.Timeouts timeouts, RelayMetrics metrics, StreamRegistry registry) {
        this.life = life;
        this.writer = writer;
        this.headers = headers;
        this.dialer = dialer;
        this.timeouts = timeouts;
        this.metrics = metrics;
        this.registry = registry;
        this.budget = new SessionBudget(timeouts.sessionBufferBytes());
        this.reads = new PublisherReads(headers::sessionId);
    }

    /** The limits {@code welcome} negotiated; streams exist only after it. */
    void welcomed(SessionLimits negotiated) {
        limits = negotiated;
    }

    boolean contains(long streamId) {
        return streams.containsKey(streamId);
    }

    int size() {
        return streams.size();
    }

    /** Puts a new stream in the table and starts opening it (rows 4-11 on its own thread). */
    void start(long streamId, Target target) {
        DataStream ds = new DataStream(this, streamId, target);
        streams.put(streamId, ds);
        ds.start();
    }

    void unsubscribe(long streamId) {
        DataStream ds = streams.get(streamId);
        if (ds != null) {
            ds.unsubscribe();
        }
    }

    /** Section 6, revocation: re-checks every stream after a committed metadata change. */
    void revokeUnadvertised(PublisherView view) {
        for (DataStream ds : streams.values()) {
            PublisherKey key = ds.key();
            // a stream already closing (publisher gone, unsubscribed) stays in the map for a moment: not logged
            if (key != null && view.check(key) == Advertisement.NOT_ADVERTISED && ds.revoke()) {
                LOG.info("stream_revoked").field("stream_id", ds.streamId()).log();
            }
        }
    }

    /** No stream left and every answer written: a drain may end the session. */
    boolean settled() {
        return streams.isEmpty() && answersInFlight.get() == 0;
    }

    /** The session ended: every stream closes with it, answering nothing; then the readiness loop stops. */
    void closeAll() {
        for (DataStream ds : new ArrayList<>(streams.values())) {
            ds.closeWithSession();
        }
        reads.close();
    }

    int openCount() {
        return openStreams.get();
    }

    long bufferedBytes() {
        return budget.usedBytes();
    }

    // ---------------------------------------------------------------- the streams' context

    @Override
    public TargetDialer dialer() {
        return dialer;
    }

    @Override
    public BusStream open(long streamId, BooleanSupplier commit) throws TransportException {
        return life.connection().open(headers.dataStream(streamId), timeouts.streamSlot(), commit);
    }

    @Override
    public Duration slotTimeout() {
        return timeouts.streamSlot();
    }

    @Override
    public Duration responseHeadTimeout() {
        return timeouts.responseHead();
    }

    @Override
    public PublisherReads publisherReads() {
        return reads;
    }

    @Override
    public ChunkQueue newQueue() {
        return new ChunkQueue(limits.maxStreamBufferBytes(), budget);
    }

    @Override
    public RelayMetrics metrics() {
        return metrics;
    }

    @Override
    public void closed(long streamId, Code code) {
        // Counted as it is written, so a router that reads the close sees the count too.
        writer.send(new Frame.StreamClosed(streamId, code), () -> metrics.streamClosed(code));
    }

    @Override
    public void opened(DataStream ds) {
        openStreams.incrementAndGet();
        metrics.subscribeOpened(ds.age()); // the stream's age is the time since its subscribe arrived
        registry.streamOpened(ds);
        writer.send(new Frame.StreamOpened(ds.streamId()));
    }

    @Override
    public void refused(long streamId, Code code, String reason) {
        // The frame is counted as it is written, so a router that reads the answer sees the count too, and one
        // dropped with its session is not.
        metrics.subscribeRefused(code);
        registry.refused(streamId, code, reason);
        writer.send(new Frame.StreamRefused(streamId, code, reason), () -> metrics.refusalSent(code));
    }

    /**
     * A refusal decided by the session's reader (section 5 rows 1-3): written from a thread of its own, because a
     * router that stopped reading the session stream would hold the reader in the write, and a reader that does not
     * read leaves the router's frames unread. What waits is bounded as any answer ({@link SessionWriter}).
     */
    void refusedByReader(long streamId, Code code, String reason) {
        metrics.subscribeRefused(code);
        registry.refused(streamId, code, reason);
        Frame.StreamRefused answer = new Frame.StreamRefused(streamId, code, reason);
        Runnable counted = () -> metrics.refusalSent(code);
        Thread.ofVirtual().name("session-refusal").start(() -> writer.send(answer, counted));
    }

    @Override
    public void ended(DataStream ds, boolean wasOpen, Runnable answer) {
        answersInFlight.incrementAndGet();
        try {
            if (streams.remove(ds.streamId(), ds)) {
                if (wasOpen) {
                    openStreams.decrementAndGet();
                    registry.streamEnded(ds);
                }
                life.signal();
            }
            answer.run();
        } finally {
            answersInFlight.decrementAndGet();
            life.signal();
        }
    }
}
