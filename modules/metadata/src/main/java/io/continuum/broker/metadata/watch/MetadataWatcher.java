package io.continuum.broker.metadata.watch;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.MetadataMetrics;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.metadata.internal.EqualJitterBackoff;
import io.continuum.broker.metadata.internal.Catalog;
import io.continuum.broker.metadata.internal.Limits;
import io.continuum.broker.metadata.internal.MetadataParser;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.Config;

/**
 * The metadata view: lists and watches {@code DynamoWorkerMetadata} in every watched namespace with
 * client-java and answers "is this publisher advertised?" from an immutable snapshot (R-BEH 1, R-META).
 * <ul>
 *     <li>Lists ask for 32 resources per page and parse each page from the response stream before asking
 *     for the next (R-META 5); a {@code 410 Gone} restarts the list from the start.</li>
 *     <li>A namespace's part of the snapshot is replaced atomically when its list completes; watch events
 *     (from the list's resourceVersion, with bookmarks) apply one at a time (R-META 2, 6).</li>
 *     <li>On a failure or outage the last snapshot is kept and, after a jittered backoff, the namespace is
 *     listed and watched again; a watch the server ended is resumed from its last resourceVersion.
 *     Opening any response is bounded by {@link Builder#openTimeout} (30 s, R-META 5).</li>
 *     <li>One virtual thread per watched namespace; {@link #check} and the gauges never lock.</li>
 * </ul>
 * Typical use: {@code MetadataWatcher.builder().namespaces(ns).metrics(m).build().start()}, then
 * {@link #awaitSynced(Duration)} or poll {@link #isSynced()} before dialing the bus.
 */
public final class MetadataWatcher implements PublisherView, AutoCloseable {
    /** Custom resource group. */
    public static final String GROUP = "nvidia.com";
    /** Custom resource version. */
    public static final String VERSION = "v1alpha1";
    /** Custom resource plural. */
    public static final String PLURAL = "dynamoworkermetadatas";
    /** Resources per list page (R-META 5). */
    public static final int PAGE_SIZE = 32;

    private static final EventLog LOG = EventLog.of(MetadataWatcher.class);

    private final List<String> namespaces;
    private final ApiRequests requests;
    private final MetadataMetrics metrics;
    private final Duration backoffInitial;
    private final Duration backoffMax;
    private final MetadataParser parser;
    private final ViewState view;
    private final BiConsumer<String, Integer> pageObserver;
    private final Clock clock;

    private final AtomicBoolean started = new AtomicBoolean();
    private final List<NamespaceWatch> workers = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    private MetadataWatcher(Builder b) {
        this.namespaces = List.copyOf(b.namespaces);
        this.requests = new ApiRequests(b.apiClient, b.openTimeout, b.watchTimeout);
        this.metrics = b.metrics;
        this.backoffInitial = b.backoffInitial;
        this.backoffMax = b.backoffMax;
        this.parser = new MetadataParser(b.limits);
        this.view = new ViewState(new Catalog(b.limits, b.metrics), namespaces.size());
        this.pageObserver = b.pageObserver;
        this.clock = b.clock;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Starts one watcher thread per namespace. Idempotent; refused after {@link #close()}. */
    public synchronized MetadataWatcher start() {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        if (started.compareAndSet(false, true)) {
            for (String ns : namespaces) {
                NamespaceWatch w = new NamespaceWatch(ns, requests, parser, view, metrics,
                        new EqualJitterBackoff(backoffInitial, backoffMax), pageObserver, clock);
                workers.add(w);
                w.start();
            }
        }
        return this;
    }

    @Override
    public boolean isSynced() {
        return view.isSynced();
    }

    /** Waits until every watched namespace has completed its initial list; false when {@code timeout} passed first. */
    public boolean awaitSynced(Duration timeout) throws InterruptedException {
        return view.awaitSynced(timeout);
    }

    @Override
    public Advertisement check(PublisherKey key) {
        return view.check(key);
    }

    @Override
    public AutoCloseable onChange(Runnable listener) {
        return view.onChange(listener);
    }

    /** Resources held in all watched namespaces, advertising or not ({@code metadata_resources}). */
    public int resourceCount() {
        return view.catalog().snapshot().resourceCount();
    }

    /** Unique advertised publishers ({@code metadata_publishers}). */
    public int publisherCount() {
        return view.catalog().snapshot().publisherCount();
    }

    /** Publisher references held (duplicates across resources count; capped at 65,536). */
    public int referenceCount() {
        return view.catalog().snapshot().totalReferences();
    }

    /**
     * When the view was last known to be current with the API server, for the namespace that has gone
     * longest without that: the oldest, across watched namespaces, of the last time each one committed a
     * list, opened a watch from its resourceVersion, applied a watch event or bookmark, or saw the server end
     * a watch at its timeout. Empty until every namespace has completed its initial list. While the API server
     * answers, each namespace renews this at least once per watch timeout (5 minutes); during an outage it
     * stands still while the last snapshot keeps serving (R-META 2).
     *
     * @return the oldest namespace's last confirmation, or empty before the initial sync
     */
    public Optional<Instant> lastSynced() {
        long oldest = Long.MAX_VALUE;
        for (NamespaceWatch w : workers) {
            long at = w.confirmedAtMillis();
            if (at == 0) {
                return Optional.empty();
            }
            oldest = Math.min(oldest, at);
        }
        return workers.isEmpty() || !view.isSynced() ? Optional.empty() : Optional.of(Instant.ofEpochMilli(oldest));
    }

    /** One namespace's last confirmation (tests). */
    Optional<Instant> lastSynced(String namespace) {
        for (NamespaceWatch w : workers) {
            if (w.namespace().equals(namespace) && w.confirmedAtMillis() != 0) {
                return Optional.of(Instant.ofEpochMilli(w.confirmedAtMillis()));
            }
        }
        return Optional.empty();
    }

    public List<String> namespaces() {
        return namespaces;
    }

    /** Stops every watcher thread and waits (bounded) for them to end. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        for (NamespaceWatch w : workers) {
            w.stop();
        }
        for (NamespaceWatch w : workers) {
            try {
                if (!w.join(Duration.ofSeconds(10))) {
                    LOG.warn("metadata_watcher_not_stopped").field("namespace", w.namespace()).log();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Whether every watcher thread has ended (after {@link #close()}). */
    boolean isTerminated() {
        for (NamespaceWatch w : workers) {
            if (w.isAlive()) {
                return false;
            }
        }
        return true;
    }

    /** Configures a {@link MetadataWatcher}. */
    public static final class Builder {
        private final Set<String> namespaces = new LinkedHashSet<>();
        private ApiClient apiClient;
        private MetadataMetrics metrics = MetadataMetrics.NONE;
        private Duration openTimeout = Duration.ofSeconds(30);
        private Duration watchTimeout = Duration.ofMinutes(5);
        private Duration backoffInitial = Duration.ofSeconds(1);
        private Duration backoffMax = Duration.ofSeconds(60);
        private Limits limits = Limits.SPEC;
        private BiConsumer<String, Integer> pageObserver = (ns, items) -> {
        };
        private Clock clock = Clock.systemUTC();

        private Builder() {
        }

        /** The Kubernetes namespaces to watch ({@code watch_namespaces}, 1 to 32); duplicates count once. */
        public Builder namespaces(Iterable<String> namespaces) {
            for (String ns : namespaces) {
                this.namespaces.add(Objects.requireNonNull(ns, "namespace"));
            }
            return this;
        }

        /**
         * The API client; by default {@code Config.defaultClient()} (KUBECONFIG, ~/.kube/config, then the
         * in-cluster service account). Callers read module {@code io.kubernetes.client.java.api} themselves
         * (an automatic module cannot be re-exported without a lint warning).
         */
        @SuppressWarnings("exports")
        public Builder apiClient(ApiClient apiClient) {
            this.apiClient = Objects.requireNonNull(apiClient, "apiClient");
            return this;
        }

        /** Where skips, restarts and list durations are counted ({@link MetadataMetrics#NONE} by default). */
        public Builder metrics(MetadataMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /** Bound on the wait for the head of any list or watch response (R-META 5: 30 s). */
        public Builder openTimeout(Duration timeout) {
            this.openTimeout = positive(timeout);
            return this;
        }

        /** The {@code timeoutSeconds} asked of the server for each watch, in whole seconds (5 minutes by default). */
        public Builder watchTimeout(Duration timeout) {
            this.watchTimeout = positive(timeout);
            return this;
        }

        /** Jittered exponential backoff between failed passes (1 s to 60 s by default). */
        public Builder backoff(Duration initial, Duration max) {
            new EqualJitterBackoff(initial, max); // refuses a bad pair here rather than on a namespace's thread
            this.backoffInitial = initial;
            this.backoffMax = max;
            return this;
        }

        // Smaller caps, a settable clock and a hook after each parsed page: for this package's tests only.
        Builder limits(Limits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        Builder pageObserver(BiConsumer<String, Integer> observer) {
            this.pageObserver = Objects.requireNonNull(observer, "observer");
            return this;
        }

        /**
         * Builds the view, not started.
         *
         * @throws IOException when no API client was given and none can be configured
         */
        public MetadataWatcher build() throws IOException {
            if (namespaces.isEmpty() || namespaces.size() > 32) {
                throw new IllegalArgumentException("watch 1 to 32 namespaces, not " + namespaces.size());
            }
            if (apiClient == null) {
                apiClient = Config.defaultClient();
            }
            return new MetadataWatcher(this);
        }

        private static Duration positive(Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("duration must be positive");
            }
            return d;
        }
    }
}
