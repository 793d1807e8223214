package io.continuum.broker.relay.transport;

/**
 * Both directions' connection-level flow-control accounting, guarded by the connection's lock: the peer's window
 * for this side's DATA (fed by its WINDOW_UPDATEs and SETTINGS), and the window this side granted the peer (opened
 * once at start, replenished as streams release bytes or as bytes no stream will release are credited back).
 */
final class ConnectionWindows {
    private final TransportSettings settings;
    private long sendWindow = TransportSettings.STREAM_RECEIVE_WINDOW;
    private long peerInitialWindow = TransportSettings.STREAM_RECEIVE_WINDOW;
    private long received;          // DATA payload bytes received on the connection
    private long granted = TransportSettings.STREAM_RECEIVE_WINDOW; // window granted to the peer in total
    private long pendingCredit;

    ConnectionWindows(TransportSettings settings) {
        this.settings = settings;
    }

    /** The connection receive window was opened to its configured size. */
    void opened() {
        granted = settings.connectionReceiveWindow();
    }

    long sendWindow() {
        return sendWindow;
    }

    void consumeSendWindow(int n) {
        sendWindow -= n;
    }

    void peerUpdate(int increment) {
        sendWindow += increment;
    }

    long peerInitialWindow() {
        return peerInitialWindow;
    }

    /** @return by how much every stream's send window changes */
    long peerInitialWindow(long value) {
        long delta = value - peerInitialWindow;
        peerInitialWindow = value;
        return delta;
    }

    /** @return false if the peer overran the connection's receive window */
    boolean received(int length) {
        received += length;
        return received <= granted;
    }

    /** Credits bytes released (or never to be released); returns an increment to send now, or 0. */
    int credit(long bytes) {
        pendingCredit += bytes;
        if (pendingCredit >= settings.connectionWindowUpdateThreshold()) {
            int increment = (int) Math.min(Integer.MAX_VALUE, pendingCredit);
            pendingCredit -= increment;
            granted += increment;
            return increment;
        }
        return 0;
    }

    /** @return bytes received that no release, reset or dropped frame has credited back yet */
    long uncredited() {
        return received - (granted - settings.connectionReceiveWindow()) - pendingCredit;
    }
}
