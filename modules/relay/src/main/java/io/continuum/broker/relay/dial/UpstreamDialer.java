package io.continuum.broker.relay.dial;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.relay.api.DialDefaults;

/**
 * Filters resolved addresses and connects to the first allowed one that answers
 * (bus-protocol-v1.md section 5 rows 9-10, R-SEC 7 and 9a, R-OPEN).
 * <ul>
 *     <li>Every resolved address passes the {@link AddressFilter} right here, immediately before
 *     dialing; when all are rejected the answer is {@code target_not_allowed} and no connection is
 *     attempted.</li>
 *     <li>The allowed addresses are tried in resolver order, each attempt bounded by
 *     {@code attemptTimeout} ({@code upstream_connect_timeout}, 5 s) and all together by the
 *     connect budget (10 s) counted from the end of DNS resolution (a stage deadline of its own).
 *     Nothing connected in time: {@code upstream_connect_failed}.</li>
 *     <li>The socket connects to exactly the {@link InetAddress} that passed the filter
 *     ({@code new InetSocketAddress(address, port)}), never to a name: there is no second
 *     resolution.</li>
 *     <li>At most {@code maxConcurrentDials} connects run at once; a dial waiting for a permit
 *     keeps its deadline (waiting counts against the budget).</li>
 * </ul>
 * Cancelled by interrupting the dialing thread, which must be virtual: the interrupt ends a permit wait at once and
 * closes a connecting socket. Holds the dial permits: one per broker (at most one session runs at a time).
 */
public final class UpstreamDialer {
    private final AddressFilter filter;
    private final Duration attemptTimeout;
    private final Duration connectBudget;
    private final int maxConcurrentDials;
    private final Semaphore permits;
    private final SocketSettings socketSettings;
    private final Connector connector;

    /**
     * A dialer with the spec's defaults ({@link DialDefaults}).
     *
     * @param filter address filter
     */
    public UpstreamDialer(AddressFilter filter) {
        this(filter, DialDefaults.CONNECT_ATTEMPT_TIMEOUT, DialDefaults.CONNECT_BUDGET,
                DialDefaults.MAX_CONCURRENT_DIALS, SocketSettings.DEFAULTS, Connector.SYSTEM);
    }

    /**
     * A dialer.
     *
     * @param filter             address filter
     * @param attemptTimeout     bound for one connect attempt ({@code upstream_connect_timeout})
     * @param connectBudget      bound for all attempts of one subscribe, counted from the end of DNS
     * @param maxConcurrentDials connects allowed at once
     * @param socketSettings     socket options
     * @param connector          the connect step
     */
    public UpstreamDialer(AddressFilter filter, Duration attemptTimeout, Duration connectBudget,
                          int maxConcurrentDials, SocketSettings socketSettings, Connector connector) {
        this.filter = Objects.requireNonNull(filter, "filter");
        this.attemptTimeout = TargetResolver.positive(attemptTimeout, "attemptTimeout");
        this.connectBudget = TargetResolver.positive(connectBudget, "connectBudget");
        if (maxConcurrentDials < 1) {
            throw new IllegalArgumentException("maxConcurrentDials must be at least 1");
        }
        this.maxConcurrentDials = maxConcurrentDials;
        this.permits = new Semaphore(maxConcurrentDials, true);
        this.socketSettings = Objects.requireNonNull(socketSettings, "socketSettings");
        this.connector = Objects.requireNonNull(connector, "connector");
    }

    /**
     * The connect budget, counted from the end of DNS resolution.
     *
     * @return duration
     */
    public Duration connectBudget() {
        return connectBudget;
    }

    /**
     * The bound for one attempt.
     *
     * @return duration
     */
    public Duration attemptTimeout() {
        return attemptTimeout;
    }

    /**
     * Connects that may run at once.
     *
     * @return the bound
     */
    public int maxConcurrentDials() {
        return maxConcurrentDials;
    }

    /** Dials waiting for a permit (an estimate, for tests and diagnostics). */
    int queuedDials() {
        return permits.getQueueLength();
    }

    /** Permits free right now (for tests and diagnostics). */
    int freeDialPermits() {
        return permits.availablePermits();
    }

    /**
     * Filters and dials on the calling thread.
     *
     * @param key          the publisher being dialed; its port is dialed
     * @param addresses    resolved addresses, in resolver order
     * @param startedNanos {@link System#nanoTime()} when the connect stage began (DNS done); the budget counts
     *                     from here
     * @return {@link DialResult.Connected}, {@link DialResult.Refused} with {@code target_not_allowed} or
     *         {@code upstream_connect_failed}, or {@link DialResult.Cancelled} when interrupted while connecting
     * @throws InterruptedException when interrupted while waiting for a permit
     */
    DialResult dial(PublisherKey key, List<InetAddress> addresses, long startedNanos) throws InterruptedException {
        List<InetAddress> allowed = new ArrayList<>(addresses.size());
        LinkedHashSet<String> rejections = new LinkedHashSet<>();
        for (InetAddress address : addresses) {
            AddressVerdict verdict = filter.check(address);
            if (verdict instanceof AddressVerdict.Rejected rejected) {
                rejections.add(rejected.reason());
            } else {
                allowed.add(address);
            }
        }
        if (allowed.isEmpty()) {
            return new DialResult.Refused(Code.TARGET_NOT_ALLOWED, String.join(", ", rejections));
        }
        long deadline = startedNanos + connectBudget.toNanos();
        long wait = deadline - System.nanoTime();
        if (wait <= 0 || !permits.tryAcquire(wait, TimeUnit.NANOSECONDS)) {
            return new DialResult.Refused(Code.UPSTREAM_CONNECT_FAILED, "no dial slot within the connect budget");
        }
        try {
            return connectFirst(key, allowed, deadline);
        } finally {
            permits.release();
        }
    }

    private DialResult connectFirst(PublisherKey key, List<InetAddress> allowed, long deadline) {
        String lastFailure = "connect budget exhausted";
        for (InetAddress address : allowed) {
            if (Thread.currentThread().isInterrupted()) {
                return DialResult.Cancelled.INSTANCE;
            }
            long remaining = deadline - System.nanoTime();
            // Less than a millisecond left is no budget: Socket.connect counts whole milliseconds.
            if (remaining < TimeUnit.MILLISECONDS.toNanos(1)) {
                lastFailure = "connect budget exhausted";
                break;
            }
            long timeoutNanos = Math.min(remaining, attemptTimeout.toNanos());
            // Rounded up, so an attempt that uses its whole timeout also uses the whole budget.
            long ceilMillis = (timeoutNanos + 999_999L) / 1_000_000L;
            int timeoutMillis = (int) Math.max(1L, Math.min(Integer.MAX_VALUE, ceilMillis));
            InetSocketAddress remote = new InetSocketAddress(address, key.port());
            Socket socket = null;
            try {
                // A channel's socket: the session reads every publisher socket from one readiness loop, which
                // needs channels. Connected here in blocking mode, as a plain socket would be.
                socket = SocketChannel.open().socket();
                socketSettings.applyTo(socket);
                connector.connect(socket, remote, timeoutMillis);
                if (Thread.currentThread().isInterrupted()) {
                    // cancelled the instant the handshake completed: the caller no longer wants the socket
                    closeQuietly(socket);
                    return DialResult.Cancelled.INSTANCE;
                }
                if (connectedToItself(socket, remote)) {
                    // Nothing listened and the kernel gave the socket the target's own port as its source
                    // port: a simultaneous open with itself, which reaches no publisher (Go's net package
                    // guards against the same). A refused connect, as far as the router is concerned.
                    closeQuietly(socket);
                    lastFailure = "connected to itself (nothing listens on the port)";
                    continue;
                }
                return new DialResult.Connected(key, socket, remote);
            } catch (IOException e) {
                closeQuietly(socket);
                // An interrupt closes a virtual thread's connecting socket: the connect fails with a
                // SocketException, the interrupt stays set.
                if (Thread.currentThread().isInterrupted()
                        || e instanceof InterruptedIOException && !(e instanceof SocketTimeoutException)) {
                    return DialResult.Cancelled.INSTANCE;
                }
                lastFailure = describe(e);
            } catch (RuntimeException | Error e) {
                closeQuietly(socket);
                throw e;
            }
        }
        return new DialResult.Refused(Code.UPSTREAM_CONNECT_FAILED, lastFailure);
    }

    private static void closeQuietly(Socket s) {
        if (s == null) {
            return;
        }
        try {
            s.close();
        } catch (IOException ignored) {
            // closing for cleanup; nothing to report
        }
    }

    private static boolean connectedToItself(Socket socket, InetSocketAddress remote) {
        return socket.getLocalPort() == remote.getPort() && remote.getAddress().equals(socket.getLocalAddress());
    }

    private static String describe(IOException e) {
        if (e instanceof SocketTimeoutException) {
            return "connect timed out";
        }
        if (e instanceof ConnectException) {
            return "connection refused";
        }
        if (e instanceof java.net.NoRouteToHostException) {
            return "no route to host";
        }
        return "connect failed";
    }
}
