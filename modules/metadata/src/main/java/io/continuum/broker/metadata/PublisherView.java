package io.continuum.broker.metadata;

/**
 * Read side of the metadata view, as the relay uses it. Implementations are thread-safe; every
 * answer comes from one atomically published snapshot.
 */
public interface PublisherView {
    /**
     * True once every watched namespace has completed its initial list (R-BEH 1, R-META 1), and
     * from then on, also during API outages (R-META 2).
     *
     * @return whether the view is synced
     */
    boolean isSynced();

    /**
     * Whether {@code key} is advertised by at least one resource in the current snapshot.
     *
     * @param key publisher key built with {@link PublisherKey#of}
     * @return the answer, {@link Advertisement#NOT_SYNCED} before the initial sync
     */
    Advertisement check(PublisherKey key);

    /**
     * Registers a listener run after every change that may have removed advertisements: a watch
     * event applied or a relist committed; never merely because the API server is unreachable.
     * The relay re-checks its open streams then (bus-protocol-v1.md section 6, revocation).
     * Listeners run on the view's own thread and must not block.
     *
     * @return handle that removes the listener when closed
     */
    AutoCloseable onChange(Runnable listener);
}
