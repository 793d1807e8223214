package io.continuum.broker.app.runtime;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.continuum.broker.app.observe.BrokerStatus;

/**
 * The working part of the broker behind the service shell: metadata sync and the bus session
 * (the relay). The shell starts the observability server, calls {@link #start()}, waits for
 * SIGTERM/SIGINT, then calls {@link #shutdown(Duration)} and exits 0 (R-BEH-8).
 */
public interface BrokerRuntime {

    /**
     * Readiness for {@code /readyz}: true once every watched namespace completed its initial list.
     *
     * @return readiness source
     */
    BooleanSupplier ready();

    /**
     * Snapshot for {@code /statusz}.
     *
     * @return status source
     */
    Supplier<BrokerStatus> status();

    /**
     * Starts metadata sync and the session loop; returns at once.
     */
    void start();

    /**
     * Graceful shutdown: send {@code draining}, refuse new subscribes with {@code draining}, let open
     * streams finish until the deadline, end the session. Returns when done; returns at once when no
     * session is welcomed.
     *
     * @param drainDeadline {@code drain_deadline}
     * @throws InterruptedException if interrupted while draining
     */
    void shutdown(Duration drainDeadline) throws InterruptedException;

    /**
     * Waits until {@link #ready()} holds, at most {@code timeout}. By default it looks every 100 ms; a runtime that
     * can be told overrides it.
     *
     * @param timeout longest wait
     * @return whether it is ready
     * @throws InterruptedException when interrupted
     */
    default boolean awaitReady(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!ready().getAsBoolean()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            Thread.sleep(Math.min(100, Math.max(1, left / 1_000_000)));
        }
        return true;
    }

    /**
     * Completes when the runtime cannot work any more (the relay's session loop ended by an unexpected error), so
     * that the shell exits and the process is restarted. Outages (router, credential, API server) never complete
     * it: they are retried. By default it never completes.
     *
     * @return the runtime's death, if it comes
     */
    default CompletionStage<Throwable> died() {
        return new CompletableFuture<>();
    }
}
