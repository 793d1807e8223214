package io.continuum.broker.relay.session;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.relay.api.RelayStatus;
import io.continuum.broker.relay.dial.RefusalLog;
import io.continuum.broker.relay.stream.DataStream;

/**
 * What the broker knows about its current session and streams, across sessions, for {@code /statusz}, the
 * {@code open_streams} gauge and the rate-limited logs (refusals, router frames). Thread-safe. Fed only from the session side: a
 * session's welcome and teardown, and its stream table ({@code SessionStreams}); a data stream never reaches it.
 */
public final class StreamRegistry {
    private static final int RECENT = 16;

    private final Map<Long, DataStream> open = new ConcurrentHashMap<>();
    private final ArrayDeque<RelayStatus.Refusal> refusals = new ArrayDeque<>();
    private final RefusalLog refusalLog;
    private final RouterFrameLog routerFrameLog = new RouterFrameLog(System::nanoTime);
    private volatile BusSession current;

    /**
     * Creates a registry.
     *
     * @param refusalLog the rate-limited warning log of R-SEC 11, told of every refusal
     */
    public StreamRegistry(RefusalLog refusalLog) {
        this.refusalLog = Objects.requireNonNull(refusalLog, "refusalLog");
    }

    /** The rate-limited lines of router frames, shared by the broker's sessions. */
    RouterFrameLog routerFrameLog() {
        return routerFrameLog;
    }

    void sessionWelcomed(BusSession session) {
        current = session;
    }

    void sessionEnded(BusSession session) {
        if (current == session) {
            current = null;
        }
    }

    void streamOpened(DataStream ds) {
        open.put(ds.streamId(), ds);
    }

    void streamEnded(DataStream ds) {
        open.remove(ds.streamId(), ds);
    }

    void refused(long streamId, Code code, String reason) {
        refusalLog.refused(streamId, code, reason);
        synchronized (refusals) {
            if (refusals.size() == RECENT) {
                refusals.removeFirst();
            }
            refusals.addLast(new RelayStatus.Refusal(Instant.now(), streamId, code, reason));
        }
    }

    /**
     * The welcomed session, if any.
     *
     * @return session or null
     */
    public BusSession currentSession() {
        return current;
    }

    /**
     * Open data streams right now.
     *
     * @return count
     */
    public int openStreamCount() {
        return open.size();
    }

    /**
     * Open streams, oldest first.
     *
     * @return snapshot
     */
    public List<RelayStatus.OpenStream> openStreams() {
        List<RelayStatus.OpenStream> list = new ArrayList<>();
        for (DataStream ds : open.values()) {
            list.add(new RelayStatus.OpenStream(ds.streamId(), String.valueOf(ds.key()), ds.age(), ds.bytesToRouter(),
                    ds.bytesToPublisher(), ds.bufferedBytes()));
        }
        list.sort(Comparator.comparing(RelayStatus.OpenStream::age).reversed());
        return list;
    }

    /**
     * The last few refusals, oldest first.
     *
     * @return snapshot
     */
    public List<RelayStatus.Refusal> recentRefusals() {
        synchronized (refusals) {
            return List.copyOf(refusals);
        }
    }
}
