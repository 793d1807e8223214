package io.continuum.broker.app.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

import io.continuum.broker.event.EventLog;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * SIGTERM and SIGINT handling (R-BEH-8, bus-protocol-v1.md section 4.6), installed before anything else of the
 * broker runs. During start-up (the configuration, credential and CA bundle loading, the observability server and
 * the runtime being built) a signal exits 0 at once: nothing has started that could drain, and a start-up step
 * may be blocked (a credential file that never delivers, say). Once {@link #started()} is called, the first signal
 * releases {@link #awaitFirst()} so the shell can drain; a second signal exits at once with status
 * {@code 128 + signal number}.
 */
public final class ShutdownSignals implements AutoCloseable {
    private final CountDownLatch first = new CountDownLatch(1);
    private final AtomicInteger received = new AtomicInteger();
    private static final EventLog LOG = EventLog.of(ShutdownSignals.class);

    private final IntConsumer immediateExit;
    private volatile boolean startingUp = true;
    private final List<Signal> signals = new ArrayList<>();
    private final List<SignalHandler> previous = new ArrayList<>();

    private ShutdownSignals(IntConsumer immediateExit) {
        this.immediateExit = immediateExit;
    }

    /**
     * Installs handlers for TERM and INT; a second signal halts the JVM.
     *
     * @return the installed handlers
     */
    public static ShutdownSignals install() {
        return install(status -> Runtime.getRuntime().halt(status));
    }

    /**
     * Installs handlers for TERM and INT.
     *
     * @param immediateExit called with {@code 0} on a signal during start-up and with {@code 128 + n} on the second
     *                      signal
     * @return the installed handlers
     */
    public static ShutdownSignals install(IntConsumer immediateExit) {
        ShutdownSignals s = new ShutdownSignals(immediateExit);
        for (String name : new String[] {"TERM", "INT"}) {
            Signal signal = new Signal(name);
            try {
                s.previous.add(Signal.handle(signal, sig -> s.onSignal(sig.getName(), sig.getNumber())));
                s.signals.add(signal);
            } catch (IllegalArgumentException e) {
                // Signal unavailable (e.g. -Xrs): the JVM's default handling applies.
            }
        }
        return s;
    }

    /** Start-up is over (the runtime runs): from now on the first signal is a graceful shutdown. */
    public void started() {
        startingUp = false;
    }

    /**
     * Blocks until the first signal.
     *
     * @return the signal number
     * @throws InterruptedException if interrupted
     */
    public int awaitFirst() throws InterruptedException {
        first.await();
        return received.get();
    }

    /**
     * Called by the signal handler (package-visible for tests).
     *
     * @param name   signal name, e.g. {@code TERM}
     * @param number signal number
     */
    void onSignal(String name, int number) {
        if (received.compareAndSet(0, number)) {
            if (startingUp) {
                LOG.info("shutdown_requested").field("signal", number).field("during", "start-up").log();
                immediateExit.accept(0);
                return;
            }
            first.countDown();
        } else {
            immediateExit.accept(128 + number);
        }
    }

    /**
     * Restores the previous handlers.
     */
    @Override
    public void close() {
        for (int i = 0; i < signals.size(); i++) {
            Signal.handle(signals.get(i), previous.get(i));
        }
    }
}
