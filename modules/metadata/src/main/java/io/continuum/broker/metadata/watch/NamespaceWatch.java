package io.continuum.broker.metadata.watch;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.metadata.MetadataMetrics;
import io.continuum.broker.metadata.RestartReason;
import io.continuum.broker.metadata.SkipReason;
import io.continuum.broker.metadata.internal.EqualJitterBackoff;
import io.continuum.broker.metadata.internal.Catalog;
import io.continuum.broker.metadata.internal.MetadataParser;
import io.continuum.broker.metadata.internal.ParsedResource;
import okhttp3.Call;
import okhttp3.Response;

/**
 * One watched namespace on its own virtual thread: list, watch from the list's resourceVersion, and on
 * any end list or watch again, forever, until {@link #stop()}.
 * <ul>
 *     <li>A list reads each page of 32 from the response stream into a {@link Catalog.Listing} before asking
 *     for the next (R-META 5); the namespace's part of the snapshot is replaced only when the last page
 *     commits, so a failed list leaves the last snapshot serving (R-META 2).</li>
 *     <li>Watch events apply one at a time, each published at once (R-META 6).</li>
 *     <li>A watch the server ended after delivering events resumes at once from its last resourceVersion;
 *     any other end waits a jittered backoff, and a failure relists from the start.</li>
 * </ul>
 * Everything but {@link #stop()}, {@link #join} and {@link #confirmedAtMillis()} runs on the namespace's
 * own thread, so the pass state (resourceVersion, whether it has listed) needs no lock.
 */
final class NamespaceWatch {
    private static final EventLog LOG = EventLog.of(MetadataWatcher.class);

    private final String namespace;
    private final ApiRequests requests;
    private final MetadataParser parser;
    private final ViewState view;
    private final MetadataMetrics metrics;
    private final BiConsumer<String, Integer> pageObserver;
    private final Clock clock;
    private final EqualJitterBackoff backoff;
    private final CountDownLatch stopLatch = new CountDownLatch(1);
    private volatile boolean stopped;
    private volatile Thread thread;
    /** The call in flight, cancelled by {@link #stop()} so that a blocked read ends at once. */
    private volatile Call current;
    private String resourceVersion;
    private boolean listed;
    /** Wall-clock millis of the last confirmation that this namespace's view is current (0: never). */
    private volatile long confirmedAtMillis;

    NamespaceWatch(String namespace, ApiRequests requests, MetadataParser parser, ViewState view,
                   MetadataMetrics metrics, EqualJitterBackoff backoff, BiConsumer<String, Integer> pageObserver, Clock clock) {
        this.namespace = namespace;
        this.requests = requests;
        this.parser = parser;
        this.view = view;
        this.metrics = metrics;
        this.backoff = backoff;
        this.pageObserver = pageObserver;
        this.clock = clock;
    }

    String namespace() {
        return namespace;
    }

    long confirmedAtMillis() {
        return confirmedAtMillis;
    }

    void start() {
        thread = Thread.ofVirtual().name("metadata-watch-" + namespace).start(this::run);
    }

    /** Ends the loop: the backoff wait returns, the call in flight is cancelled, the thread interrupted. */
    void stop() {
        stopped = true;
        stopLatch.countDown();
        Call call = current;
        if (call != null) {
            call.cancel();
        }
        if (thread != null) {
            thread.interrupt();
        }
    }

    /** Waits for the thread to end; false when it is still running after {@code timeout}. */
    boolean join(Duration timeout) throws InterruptedException {
        return thread == null || thread.join(timeout);
    }

    boolean isAlive() {
        return thread != null && thread.isAlive();
    }

    private void run() {
        while (!stopped) {
            RestartReason reason;
            boolean healthy = false;
            try {
                if (resourceVersion == null) {
                    list();
                }
                healthy = watch();
                reason = RestartReason.CLOSED;
                confirmed(); // the server ended the watch at its timeout: current until now
            } catch (Restart r) {
                reason = r.reason();
                resourceVersion = null; // relist (R-META 2: the snapshot stays until it commits)
                if (!stopped) {
                    LOG.info("metadata_watch_restarting").field("namespace", namespace)
                            .field("reason", r.reason().label()).field("detail", r.getMessage()).log();
                }
            } catch (RuntimeException e) {
                // A bug must not end the namespace's thread for good: count, log, relist.
                reason = RestartReason.ERROR;
                resourceVersion = null;
                if (!stopped) {
                    LOG.warn("metadata_watch_failed").field("namespace", namespace).cause(e).log();
                }
            }
            if (stopped) {
                return;
            }
            metrics.watchRestarted(reason);
            if (healthy) {
                backoff.reset();
                continue; // a watch that delivered events and ended: resume at once
            }
            try {
                if (stopLatch.await(backoff.next().toNanos(), TimeUnit.NANOSECONDS)) {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void list() throws Restart {
        try (Catalog.Listing listing = view.catalog().startListing(namespace)) {
            list(listing);
        }
    }

    private void list(Catalog.Listing listing) throws Restart {
        long started = System.nanoTime();
        String token = null;
        String rv = null;
        int page = 0;
        do {
            try (Response response = open(requests.listPage(namespace, token))) {
                MetadataParser.ListPage p = parser.readList(ApiRequests.body(response).byteStream(), listing::add);
                pageObserver.accept(namespace, p.items());
                page++;
                token = p.continueToken();
                if (p.resourceVersion() != null) {
                    rv = p.resourceVersion();
                }
            } catch (IOException e) {
                throw ApiRequests.classify(e, stopped);
            }
        } while (token != null);
        if (rv == null) {
            throw new Restart(RestartReason.ERROR, "list without resourceVersion");
        }
        listing.commit();
        resourceVersion = rv;
        confirmed();
        metrics.listed(Duration.ofNanos(System.nanoTime() - started));
        backoff.reset();
        if (!listed) {
            listed = true;
            view.firstListCommitted();
        }
        int pages = page;
        LOG.debug("metadata_listed").field("namespace", namespace).field("resources", listing.size())
                .field("pages", pages).log();
        view.changed();
    }

    /** Watches from the current resourceVersion; returns whether any event arrived before a clean end. */
    private boolean watch() throws Restart {
        boolean any = false;
        try (Response response = open(requests.watch(namespace, resourceVersion))) {
            // The head says the server accepted the resourceVersion: nothing was missed up to now. Confirmed
            // before the reader exists, since Jackson reads the body's first bytes (the first event) to create it.
            confirmed();
            try (MetadataParser.EventReader events = parser.events(ApiRequests.body(response).byteStream())) {
                MetadataParser.WatchEvent e;
                while (!stopped && (e = events.next()) != null) {
                    any = true;
                    apply(e);
                    confirmed();
                }
            }
        } catch (IOException e) {
            throw ApiRequests.classify(e, stopped);
        }
        return any;
    }

    private void apply(MetadataParser.WatchEvent e) throws Restart {
        ParsedResource object = e.object();
        switch (e.type()) {
            case "ADDED", "MODIFIED" -> {
                view.catalog().upsert(namespace, object);
                advance(object);
                view.changed();
            }
            case "DELETED" -> {
                if (object.wellFormed()) {
                    view.catalog().delete(namespace, object.name());
                } else {
                    metrics.skipped(SkipReason.MALFORMED_RESOURCE);
                }
                advance(object);
                view.changed();
            }
            case "BOOKMARK" -> advance(object);
            case "ERROR" -> throw new Restart(object.statusCode() == 410 ? RestartReason.EXPIRED
                    : RestartReason.ERROR, "ERROR event, code " + object.statusCode());
            default -> throw new Restart(RestartReason.ERROR, "unknown event type");
        }
    }

    /** Makes the call the one {@link #stop()} cancels, then opens it within the deadline. */
    private Response open(Call call) throws Restart, IOException {
        current = call;
        if (stopped) {
            call.cancel(); // stop() ran before the call was current: it must not wait for the server
        }
        return requests.open(call);
    }

    private void confirmed() {
        confirmedAtMillis = clock.millis();
    }

    private void advance(ParsedResource object) {
        if (object.resourceVersion() != null && !object.resourceVersion().isEmpty()) {
            resourceVersion = object.resourceVersion();
        }
    }
}
