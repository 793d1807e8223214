package io.continuum.broker.relay.dial;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The real connect step, recording every remote it is asked to connect to: a refused target must
 * leave this list empty, whichever host the address belongs to.
 */
final class RecordingConnector implements Connector {
    final List<InetSocketAddress> attempts = new CopyOnWriteArrayList<>();

    @Override
    public void connect(Socket socket, InetSocketAddress remote, int timeoutMillis) throws IOException {
        attempts.add(remote);
        Connector.SYSTEM.connect(socket, remote, timeoutMillis);
    }
}
