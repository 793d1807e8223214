package io.continuum.broker.relay.dial;

import java.io.IOException;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Handle on one subscribe's check-and-dial, cancellable from any thread.
 * <p>
 * The result completes exactly once: with the {@link Outcome} of the checks, or with
 * {@link Outcome.Cancelled} when {@link #cancel()} came first. Cancelling interrupts the work
 * (a pending DNS wait, a wait for a dial permit, a connect in progress) and closes any socket the
 * attempt opened. A {@link Outcome.Connected} that loses the race against {@code cancel()} is
 * never delivered: its socket is closed instead. So after {@code cancel()} the caller owns a
 * socket only if it had already received {@code Connected}.
 */
public final class DialAttempt {
    private final CompletableFuture<Outcome> result = new CompletableFuture<>();
    private final long startedNanos;
    private volatile Thread worker;
    private volatile Socket socket;

    DialAttempt(long startedNanos) {
        this.startedNanos = startedNanos;
    }

    static DialAttempt finished(Outcome outcome) {
        DialAttempt a = new DialAttempt(System.nanoTime());
        a.result.complete(outcome);
        return a;
    }

    /**
     * When the subscribe was received ({@link System#nanoTime()}); every deadline counts from here.
     *
     * @return nano time
     */
    public long startedNanos() {
        return startedNanos;
    }

    /**
     * The outcome, completing once. Read-only view: completing it from outside has no effect.
     *
     * @return completion stage
     */
    public CompletionStage<Outcome> result() {
        return result.minimalCompletionStage();
    }

    /**
     * Whether the outcome is known.
     *
     * @return true once completed (including cancelled)
     */
    public boolean isDone() {
        return result.isDone();
    }

    /**
     * Waits for the outcome.
     *
     * @return outcome
     * @throws InterruptedException when the waiting thread is interrupted
     */
    public Outcome await() throws InterruptedException {
        try {
            return result.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("dial attempt failed unexpectedly", e.getCause());
        }
    }

    /**
     * Waits for the outcome at most {@code timeout}.
     *
     * @param timeout longest wait
     * @return outcome
     * @throws InterruptedException when the waiting thread is interrupted
     * @throws TimeoutException     when it is not known in time
     */
    public Outcome await(Duration timeout) throws InterruptedException, TimeoutException {
        try {
            return result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("dial attempt failed unexpectedly", e.getCause());
        }
    }

    /**
     * Aborts the attempt: the outcome becomes {@link Outcome.Cancelled} unless it was already known.
     * Idempotent, non-blocking, callable from any thread.
     *
     * @return true when this call cancelled it, false when the outcome was already known
     */
    public boolean cancel() {
        if (!result.complete(Outcome.Cancelled.INSTANCE)) {
            return false;
        }
        Thread w = worker;
        if (w != null) {
            w.interrupt();
        }
        closeQuietly(socket);
        return true;
    }

    /**
     * Whether {@link #cancel()} won.
     *
     * @return true when the outcome is {@link Outcome.Cancelled}
     */
    public boolean isCancelled() {
        return result.isDone() && result.getNow(null) instanceof Outcome.Cancelled;
    }

    void runOn(Thread thread) {
        this.worker = thread;
    }

    /**
     * Registers the socket being connected so that {@link #cancel()} closes it.
     *
     * @return false when already cancelled (the caller closes the socket and stops)
     */
    boolean track(Socket s) {
        this.socket = s;
        if (isCancelled()) {
            closeQuietly(s);
            return false;
        }
        return true;
    }

    void untrack() {
        this.socket = null;
    }

    /**
     * Delivers the outcome; a {@link Outcome.Connected} that arrives after a cancel has its socket
     * closed.
     */
    void finish(Outcome outcome) {
        if (!result.complete(outcome) && outcome instanceof Outcome.Connected c) {
            closeQuietly(c.socket());
        }
    }

    static void closeQuietly(Socket s) {
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing for cleanup; nothing to report
            }
        }
    }
}
