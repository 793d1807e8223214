package io.continuum.broker.relay.transport;

/**
 * One stream's receive-side flow control, guarded by the connection's lock: what the peer sent, what the
 * application released (the bytes reached their destination), and the window granted back. The window is
 * replenished only by releases, never on read.
 */
final class StreamReceiveWindow {
    private final int updateThreshold;
    private long received;
    private long released;
    private long granted = TransportSettings.STREAM_RECEIVE_WINDOW;
    private long pendingCredit;
    private boolean creditReturned;

    StreamReceiveWindow(int updateThreshold) {
        this.updateThreshold = updateThreshold;
    }

    long received() {
        return received;
    }

    /** @return false if the peer overran the window */
    boolean received(int length) {
        received += length;
        return received <= granted;
    }

    /** @return whether the stream's outstanding bytes were handed back to the connection already (it ended early) */
    boolean creditReturned() {
        return creditReturned;
    }

    /**
     * Records a release.
     *
     * @param remoteOpen whether the peer may still send (no stream WINDOW_UPDATE after its END_STREAM)
     * @return the stream WINDOW_UPDATE increment to send now, or 0
     */
    int release(int n, boolean remoteOpen) {
        if (released + n > received) {
            throw new IllegalArgumentException("release of more bytes than were received");
        }
        released += n;
        pendingCredit += n;
        if (remoteOpen && pendingCredit >= updateThreshold) {
            int increment = (int) pendingCredit;
            granted += increment;
            pendingCredit = 0;
            return increment;
        }
        return 0;
    }

    /** The stream ended abnormally: @return received bytes nobody will release (once; 0 afterwards) */
    long takeOutstanding() {
        if (creditReturned) {
            return 0;
        }
        creditReturned = true;
        return received - released;
    }
}
