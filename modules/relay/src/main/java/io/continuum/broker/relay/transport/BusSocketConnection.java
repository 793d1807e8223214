package io.continuum.broker.relay.transport;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;

import io.helidon.common.buffers.DataReader;
import io.helidon.common.buffers.DataWriter;
import io.helidon.common.socket.HelidonSocket;
import io.helidon.common.socket.TlsSocket;
import io.helidon.webclient.api.ClientConnection;

/**
 * What Helidon's {@code Http2ClientConnection} reads from and writes to: the TLS socket this transport dialed
 * itself, with every inbound byte passing the {@link InboundFrameSniffer} before Helidon parses it, and every
 * outbound frame passing the {@link SerializedFrameWriter}. Its close is how Helidon reports that it gave up on
 * the connection.
 */
final class BusSocketConnection implements ClientConnection {
    private static final int READ_CHUNK = 32 * 1024;

    private final TlsDialer.Dialed dialed;
    private final HelidonSocket helidonSocket;
    private final DataReader reader;
    private final SerializedFrameWriter writer;
    private final Runnable onHelidonClose;
    private final String channelId;

    BusSocketConnection(TlsDialer.Dialed dialed,
                        InputStream in,
                        InboundFrameSniffer sniffer,
                        SerializedFrameWriter writer,
                        ReadFailure onReadFailure,
                        Runnable onHelidonClose) {
        this.dialed = dialed;
        this.channelId = "bus-" + Integer.toHexString(System.identityHashCode(dialed.tcp()));
        this.helidonSocket = TlsSocket.client(dialed.tls(), channelId);
        this.writer = writer;
        this.onHelidonClose = onHelidonClose;
        byte[] buffer = new byte[READ_CHUNK];
        this.reader = DataReader.create(() -> {
            while (true) {
                int n;
                try {
                    n = in.read(buffer);
                } catch (IOException e) {
                    onReadFailure.failed(e);
                    return null;
                }
                if (n < 0) {
                    onReadFailure.failed(null);
                    return null;
                }
                byte[] chunk;
                try {
                    chunk = sniffer.filter(buffer, n);
                } catch (RuntimeException e) {
                    onReadFailure.failed(new IOException("inbound frame accounting failed", e));
                    return null;
                }
                if (chunk.length > 0) {
                    return chunk;
                }
                // all of it dropped, or a frame header's first bytes held back: Helidon gets nothing yet
            }
        });
    }

    /** Called on the reader thread when the socket read fails ({@code null}: orderly EOF). */
    @FunctionalInterface
    interface ReadFailure {
        void failed(IOException cause);
    }

    @Override
    public DataReader reader() {
        return reader;
    }

    @Override
    public DataWriter writer() {
        return writer;
    }

    @Override
    public String channelId() {
        return channelId;
    }

    @Override
    public HelidonSocket helidonSocket() {
        return helidonSocket;
    }

    @Override
    public void readTimeout(Duration readTimeout) {
        // the transport owns the socket's timeouts: reads block, liveness is the keepalive's job
    }

    @Override
    public boolean isConnected() {
        return !dialed.tcp().isClosed();
    }

    @Override
    public void releaseResource() {
        closeResource();
    }

    @Override
    public void closeResource() {
        onHelidonClose.run();
    }
}
