package io.continuum.broker.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicBoolean;

import io.continuum.broker.testing.bus.RouterDataStream;

/** RouterDataStream.bridge, plus a switch that stops reading the router side (withholds the window). */
final class PausableBridge {
    final AtomicBoolean paused = new AtomicBoolean();
    private final Socket socket;
    private final Thread in;
    private final Thread out;

    PausableBridge(RouterDataStream stream, Socket socket) {
        this.socket = socket;
        InputStream fromBroker = stream.fromBroker();
        OutputStream toBroker = stream.toBroker();
        in = Thread.ofVirtual().name("bench-bridge-in").start(() -> {
            byte[] buf = new byte[64 * 1024];
            try (socket) {
                OutputStream o = socket.getOutputStream();
                while (true) {
                    while (paused.get()) {
                        Thread.sleep(5); // bounded by close(), which interrupts
                    }
                    int n = fromBroker.read(buf);
                    if (n < 0) {
                        break;
                    }
                    o.write(buf, 0, n);
                }
            } catch (IOException | InterruptedException | RuntimeException ignored) {
                // either side went away (Helidon throws RequestException once the stream is reset)
            }
        });
        out = Thread.ofVirtual().name("bench-bridge-out").start(() -> {
            byte[] buf = new byte[16 * 1024];
            try {
                InputStream i = socket.getInputStream();
                int n;
                while ((n = i.read(buf)) >= 0) {
                    toBroker.write(buf, 0, n);
                    toBroker.flush();
                }
            } catch (IOException | RuntimeException ignored) {
                // either side went away
            }
        });
    }

    void close() {
        in.interrupt();
        out.interrupt();
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
