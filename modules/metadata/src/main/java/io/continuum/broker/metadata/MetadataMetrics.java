package io.continuum.broker.metadata;

import java.time.Duration;

/**
 * Counter hooks of the metadata view (R-MET). Gauges ({@code metadata_synced},
 * {@code metadata_resources}, {@code metadata_publishers}) are read from
 * {@link MetadataWatcher#isSynced()}, {@link MetadataWatcher#resourceCount()} and
 * {@link MetadataWatcher#publisherCount()} instead. Implementations must be thread-safe and must not
 * block: they are called from the watcher threads.
 */
public interface MetadataMetrics {
    /** Metrics that record nothing. */
    MetadataMetrics NONE = new MetadataMetrics() {
    };

    /**
     * One entry or resource skipped ({@code metadata_skipped_total{reason}}).
     *
     * @param reason why
     */
    default void skipped(SkipReason reason) {
    }

    /**
     * One list or watch pass ended ({@code metadata_watch_restarts_total{reason}}).
     *
     * @param reason why
     */
    default void watchRestarted(RestartReason reason) {
    }

    /**
     * A namespace's list completed: every page read and the namespace's part of the snapshot committed.
     *
     * @param elapsed from the first page request to the commit
     */
    default void listed(Duration elapsed) {
    }
}
