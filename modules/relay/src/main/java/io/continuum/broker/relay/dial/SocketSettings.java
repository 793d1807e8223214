package io.continuum.broker.relay.dial;

import java.io.IOException;
import java.net.Socket;
import java.net.SocketOption;
import java.time.Duration;
import java.util.Objects;

import io.continuum.broker.event.EventLog;

/**
 * Options applied to every publisher socket before it connects.
 * <p>
 * {@code TCP_NODELAY} is always on (ZMTP frames are small and latency matters) and
 * {@code SO_KEEPALIVE} is always on with short explicit timers, so a publisher whose node vanished
 * without sending RST is noticed after about {@code keepIdle + keepCount * keepInterval}
 * (default 30 s + 3 x 10 s = 60 s) instead of the kernel's two hours. The keepalive timers are
 * the JDK's extended options {@code TCP_KEEPIDLE}, {@code TCP_KEEPINTERVAL} and
 * {@code TCP_KEEPCOUNT} (module {@code jdk.net}); they are looked up by name on the socket, and
 * when the platform or module graph does not offer them the kernel defaults stay in force and one
 * warning is logged.
 *
 * @param keepIdle           idle time before the first keepalive probe (whole seconds, at least 1 s)
 * @param keepInterval       time between probes (whole seconds, at least 1 s)
 * @param keepCount          unanswered probes before the connection is dropped (at least 1)
 * @param receiveBufferBytes {@code SO_RCVBUF} requested before connecting (the kernel may cap it
 *                           at {@code net.core.rmem_max}); 0 leaves the kernel's auto-tuning alone
 */
public record SocketSettings(Duration keepIdle, Duration keepInterval, int keepCount, int receiveBufferBytes) {
    /** 30 s idle, 10 s between probes, 3 probes, 1 MiB receive buffer. */
    public static final SocketSettings DEFAULTS =
            new SocketSettings(Duration.ofSeconds(30), Duration.ofSeconds(10), 3, 1 << 20);

    private static final EventLog LOG = EventLog.of(SocketSettings.class);
    private static volatile boolean warnedMissingKeepaliveOptions;

    /**
     * Validates.
     */
    public SocketSettings {
        Objects.requireNonNull(keepIdle, "keepIdle");
        Objects.requireNonNull(keepInterval, "keepInterval");
        if (keepIdle.toSeconds() < 1 || keepInterval.toSeconds() < 1 || keepCount < 1) {
            throw new IllegalArgumentException("keepalive timers must be at least 1 s and 1 probe");
        }
        if (receiveBufferBytes < 0) {
            throw new IllegalArgumentException("receiveBufferBytes must not be negative");
        }
    }

    /**
     * Applies the options to an unconnected socket.
     *
     * @param socket socket
     * @throws IOException when a standard option cannot be set
     */
    public void applyTo(Socket socket) throws IOException {
        socket.setTcpNoDelay(true);
        socket.setKeepAlive(true);
        if (receiveBufferBytes > 0) {
            socket.setReceiveBufferSize(receiveBufferBytes);
        }
        boolean all = setIntOption(socket, "TCP_KEEPIDLE", (int) keepIdle.toSeconds())
                & setIntOption(socket, "TCP_KEEPINTERVAL", (int) keepInterval.toSeconds())
                & setIntOption(socket, "TCP_KEEPCOUNT", keepCount);
        if (!all && !warnedMissingKeepaliveOptions) {
            warnedMissingKeepaliveOptions = true;
            LOG.warn("keepalive_options_unavailable").field("detail", "TCP_KEEPIDLE/TCP_KEEPINTERVAL/"
                    + "TCP_KEEPCOUNT not supported here (is module jdk.net resolved?); kernel keepalive defaults apply").log();
        }
    }

    @SuppressWarnings("unchecked")
    private static boolean setIntOption(Socket socket, String name, int value) throws IOException {
        for (SocketOption<?> option : socket.supportedOptions()) {
            if (option.name().equals(name) && option.type() == Integer.class) {
                socket.setOption((SocketOption<Integer>) option, value);
                return true;
            }
        }
        return false;
    }

    /**
     * Reads an integer option by name, for tests and diagnostics.
     *
     * @param socket socket
     * @param name   option name such as {@code TCP_KEEPIDLE}
     * @return the value, or null when the option is not supported
     * @throws IOException when reading fails
     */
    @SuppressWarnings("unchecked")
    static Integer intOption(Socket socket, String name) throws IOException {
        for (SocketOption<?> option : socket.supportedOptions()) {
            if (option.name().equals(name) && option.type() == Integer.class) {
                return socket.getOption((SocketOption<Integer>) option);
            }
        }
        return null;
    }
}
