package io.continuum.broker.relay.transport;

import java.time.Duration;

/**
 * What a test may read of a bus connection beyond the {@link BusConnection} seam, the same on every connection
 * under it, so that the transport's tests run unchanged against each.
 */
interface ConnectionProbe {
    /** @return stream slots in use */
    long streamsInUse();

    /** @return opens parked waiting for a stream slot */
    long slotWaiters();

    /** @return the peer's current SETTINGS_MAX_CONCURRENT_STREAMS */
    long peerMaxConcurrentStreams();

    /** @return whether the connection is still usable (as {@link BusConnection#isOpen()}) */
    boolean isOpen();

    /**
     * @return DATA bytes received on the connection that neither a stream's release nor a reset or a dropped frame
     *         has credited back yet (zero once every stream is drained or gone)
     */
    long connectionBytesUncredited();

    /**
     * Sends a PING and waits for its acknowledgement.
     *
     * @return whether the ACK arrived in time
     */
    boolean ping(Duration timeout) throws InterruptedException;

    /** @return e.g. {@code TLSv1.3 alpn=h2 nodelay=true} */
    String socketDescription();
}
