package io.continuum.broker.relay.transport;

import java.net.Socket;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Closes a socket at a deadline unless {@link #finish} came first: the whole TLS handshake runs inside
 * {@code bus_connect_timeout}, not each of its reads (a server that sends a byte a second would otherwise hold the
 * attempt for hours). One virtual thread per dial, parked until the deadline or the finish.
 */
final class HandshakeWatchdog {
    private final AtomicBoolean settled = new AtomicBoolean();
    private final Thread thread;

    private HandshakeWatchdog(Socket socket, long deadlineNanos) {
        this.thread = Thread.ofVirtual().name("bus-tls-watchdog").start(() -> {
            try {
                long left = deadlineNanos - System.nanoTime();
                if (left > 0) {
                    TimeUnit.NANOSECONDS.sleep(left);
                }
            } catch (InterruptedException e) {
                return; // finished in time
            }
            if (settled.compareAndSet(false, true)) {
                TlsDialer.closeQuietly(socket); // the handshake's read fails at once
            }
        });
    }

    static HandshakeWatchdog start(Socket socket, long deadlineNanos) {
        return new HandshakeWatchdog(socket, deadlineNanos);
    }

    /** @return true when the handshake finished first; false when the deadline closed the socket */
    boolean finish() {
        if (settled.compareAndSet(false, true)) {
            thread.interrupt();
            return true;
        }
        return false;
    }
}
