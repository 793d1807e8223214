package io.continuum.broker.relay.hostile;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;

import io.continuum.broker.relay.dial.Connector;

/**
 * The broker's publisher connect step, unchanged ({@link Connector#SYSTEM}), with a count of the
 * connects in flight at once: what a publisher-side observer would see as concurrent dials.
 */
final class DialRecorder implements Connector {
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger peak = new AtomicInteger();
    private final AtomicInteger total = new AtomicInteger();

    @Override
    public void connect(Socket socket, InetSocketAddress remote, int timeoutMillis) throws IOException {
        peak.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        total.incrementAndGet();
        try {
            Connector.SYSTEM.connect(socket, remote, timeoutMillis);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /** @return the most connects that were in flight at once */
    int peak() {
        return peak.get();
    }

    /** @return connects started */
    int total() {
        return total.get();
    }

    /** @return connects in flight now */
    int inFlight() {
        return inFlight.get();
    }
}
