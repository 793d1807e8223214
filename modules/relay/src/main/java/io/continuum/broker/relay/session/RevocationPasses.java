package io.continuum.broker.relay.session;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Revocation passes of one session, coalesced (bus-protocol-v1.md section 6, revocation): each committed metadata
 * change asks for a pass over the session's streams, but at most one pass runs and at most one more waits, however
 * many changes come. Any worker Pod can rewrite its own resource, so a burst of events must not start a thread and
 * a scan of every stream per event. No change is missed: a pass asked for while one runs starts after it, so the
 * pass that starts after a burst's last event sees the final state.
 */
final class RevocationPasses {
    private final Runnable pass;
    /** Asks not yet covered by a pass that started after them; 0 when no pass runs or waits. */
    private final AtomicInteger asked = new AtomicInteger();

    /** @param pass one scan of the session's streams; runs on the passes' own virtual thread */
    RevocationPasses(Runnable pass) {
        this.pass = pass;
    }

    /** A committed metadata change (a view listener: never blocks). */
    void ask() {
        if (asked.getAndIncrement() == 0) {
            Thread.ofVirtual().name("session-revocation").start(this::run);
        }
    }

    private void run() {
        int covered = asked.get(); // every ask counted here came before the pass below starts
        while (true) {
            pass.run();
            covered = asked.addAndGet(-covered); // the asks that came during the pass: one more pass covers them
            if (covered == 0) {
                return;
            }
        }
    }
}
