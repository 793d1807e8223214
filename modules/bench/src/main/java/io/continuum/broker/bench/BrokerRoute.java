package io.continuum.broker.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.testing.bus.RouterDataStream;
import io.continuum.broker.testing.bus.RouterSession;

import static io.continuum.broker.bench.LoadHarness.NAMESPACE;
import static io.continuum.broker.bench.LoadHarness.WAIT;

/**
 * {@code count} subscriptions through the broker to one publisher port; each data stream is bridged to
 * its own accepted socket (one listener, accepted in order as each SUB connects).
 */
final class BrokerRoute implements Route {
    final long[] ids;
    final RouterDataStream[] streams;
    final PausableBridge[] bridges;
    final ServerSocket listener;
    private final RouterSession session;
    private int accepted;

    BrokerRoute(int pubPort, int count, BenchBroker broker) throws Exception {
        this.session = broker.session();
        ids = new long[count];
        streams = new RouterDataStream[count];
        bridges = new PausableBridge[count];
        for (int i = 0; i < count; i++) {
            ids[i] = broker.nextStreamId();
            session.subscribe(ids[i], NAMESPACE, "127.0.0.1", pubPort);
        }
        for (int i = 0; i < count; i++) {
            Frame answer = session.awaitAnswer(ids[i], WAIT);
            if (!(answer instanceof Frame.StreamOpened)) {
                throw new IllegalStateException("stream " + ids[i] + " not opened: " + answer);
            }
            streams[i] = broker.router().awaitDataStream(ids[i], WAIT);
        }
        listener = new ServerSocket(0, count + 16, InetAddress.getLoopbackAddress());
        listener.setSoTimeout((int) WAIT.toMillis());
    }

    /** Call right after the i-th SUB connected to {@link #endpoint()}. */
    void acceptNext() throws IOException {
        Socket s = listener.accept();
        s.setTcpNoDelay(true);
        bridges[accepted] = new PausableBridge(streams[accepted], s);
        accepted++;
    }

    @Override
    public String endpoint() {
        return "tcp://127.0.0.1:" + listener.getLocalPort();
    }

    @Override
    public void close() {
        for (int i = 0; i < ids.length; i++) {
            session.unsubscribe(ids[i]);
            if (bridges[i] != null) {
                bridges[i].close();
            }
        }
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
