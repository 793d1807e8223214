package io.continuum.broker.relay.dial;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.protocol.Target;

/**
 * One {@link TargetCheck#checkAndConnect} on a virtual thread of its own, as a stream's opener runs it, so a test
 * can start several dials, wait for each, or cancel one the way an {@code unsubscribe} does: by interrupting the
 * dialing thread.
 */
final class BackgroundDial {
    private final CompletableFuture<DialResult> result = new CompletableFuture<>();
    private final Thread thread;

    private BackgroundDial(TargetCheck check, Target target) {
        DialTarget parsed = DialTarget.of(target);
        thread = Thread.ofVirtual().name("test-dial").start(() -> {
            try {
                result.complete(check.checkAndConnect(parsed));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
    }

    static BackgroundDial start(TargetCheck check, Target target) {
        return new BackgroundDial(check, target);
    }

    DialResult await(Duration timeout) throws Exception {
        return result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Interrupts the dial unless its result is already known; false when it was. */
    boolean cancel() {
        if (result.isDone()) {
            return false;
        }
        thread.interrupt();
        return true;
    }

    boolean isCancelled() {
        return result.getNow(null) instanceof DialResult.Cancelled;
    }
}
