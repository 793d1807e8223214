package io.continuum.broker.relay.transport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The real connector ({@link TransportSettings#defaults()} chooses which connection), remembering every connection
 * it opened so a leak check can ask, after the test, whether any is still open or still holds HTTP/2 stream slots.
 */
public final class TrackingConnector implements BusConnector {
    private final BusConnector delegate;
    private final List<BusConnection> connections = new CopyOnWriteArrayList<>();
    private volatile int firstConnectionStreamId;

    /** With the production transport settings. */
    public TrackingConnector() {
        this(BusConnector.of(TransportSettings.defaults()));
    }

    /**
     * @param delegate the connector to track
     */
    public TrackingConnector(BusConnector delegate) {
        this.delegate = delegate;
    }

    @Override
    public BusConnection connect(BusEndpoint endpoint) throws BusConnectException {
        BusConnection c = delegate.connect(endpoint);
        int firstId = firstConnectionStreamId;
        if (firstId > 0 && connections.isEmpty()) {
            ((Http2BusConnection) c).probe().startStreamIdsAt(firstId);
        }
        connections.add(c);
        return c;
    }

    /** Client stream ids left when a connection says they run out ({@code BusConnection.onStreamIdsRunningOut}). */
    public static final int STREAM_IDS_RESERVE = Http2BusConnection.STREAM_IDS_RESERVE;

    /** The first connection's first stream (the session's) gets this id, right after it is connected. */
    public void startFirstConnectionStreamIdsAt(int nextId) {
        this.firstConnectionStreamId = nextId;
    }

    /**
     * A dead connection's slot count is frozen where it was (its streams were all failed and dropped with it),
     * so only open connections count.
     *
     * @return HTTP/2 stream slots in use on the connections that are still open
     */
    public long streamsInUse() {
        return connections.stream().filter(BusConnection::isOpen)
                .mapToLong(c -> ((Http2BusConnection) c).probe().streamsInUse()).sum();
    }

    /** @return opens parked waiting for an HTTP/2 stream slot on the open connections */
    public long slotWaiters() {
        return connections.stream().filter(BusConnection::isOpen)
                .mapToLong(c -> ((Http2BusConnection) c).probe().slotWaiters()).sum();
    }

    /** @return connections opened so far that are still open */
    public long openConnections() {
        return connections.stream().filter(BusConnection::isOpen).count();
    }

    /** @return connections opened so far */
    public int connectionsOpened() {
        return connections.size();
    }
}
