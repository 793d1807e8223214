package io.continuum.broker.testing.kube;

import java.util.concurrent.CountDownLatch;

/**
 * A one-shot failure the fake API server applies to the next request of a kind
 * ({@link FakeKubeApi#inject(RequestKind, Fault)}).
 */
public sealed interface Fault {
    /**
     * Answer with this HTTP status and a Kubernetes {@code Status} body.
     *
     * @param code HTTP status
     */
    record Status(int code) implements Fault {
    }

    /** Read the request, never answer the head; the connection stays open until the client gives up. */
    record Hang() implements Fault {
    }

    /** Answer the head and part of the body, then reset the connection. */
    record DropMidBody() implements Fault {
    }

    /**
     * For a LIST: send the head and the page up to (not including) item {@code afterItems}, then wait
     * (without limit) for {@code resume} before sending the rest. Shows whether a client parses a page as
     * it streams in: one that buffers the whole page first never sees those items.
     *
     * @param afterItems items sent before the stall
     * @param resume     released by the test
     */
    record StallMidBody(int afterItems, CountDownLatch resume) implements Fault {
    }

    /**
     * A stall in the middle of a list page.
     *
     * @param afterItems items sent before the stall
     * @param resume     latch that lets the rest through
     * @return fault
     */
    static Fault stallMidBody(int afterItems, CountDownLatch resume) {
        return new StallMidBody(afterItems, resume);
    }

    /**
     * An HTTP status fault.
     *
     * @param code HTTP status
     * @return fault
     */
    static Fault status(int code) {
        return new Status(code);
    }

    /**
     * A hang fault.
     *
     * @return fault
     */
    static Fault hang() {
        return new Hang();
    }

    /**
     * A connection dropped mid-body.
     *
     * @return fault
     */
    static Fault dropMidBody() {
        return new DropMidBody();
    }
}
