package io.continuum.broker.metadata;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

import com.fasterxml.jackson.core.JsonProcessingException;

import io.continuum.broker.event.EventLog;
import io.continuum.broker.metadata.internal.Backoff;
import io.continuum.broker.metadata.internal.Catalog;
import io.continuum.broker.metadata.internal.Limits;
import io.continuum.broker.metadata.internal.MetadataParser;
import io.continuum.broker.metadata.internal.ParsedResource;
import io.continuum.broker.metadata.internal.Snapshot;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.util.Config;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

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
    private final ApiClient apiClient;
    private final CustomObjectsApi customObjects;
    private final OkHttpClient listHttp;
    private final OkHttpClient watchHttp;
    private final MetadataMetrics metrics;
    private final Duration openTimeout;
    private final Duration watchTimeout;
    private final Duration backoffInitial;
    private final Duration backoffMax;
    private final MetadataParser parser;
    private final Catalog catalog;
    private final BiConsumer<String, Integer> pageObserver;
    private final Clock clock;

    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private final AtomicInteger unsynced;
    private final CountDownLatch syncedLatch = new CountDownLatch(1);
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    private final AtomicBoolean started = new AtomicBoolean();
    private final List<Worker> workers = new CopyOnWriteArrayList<>();
    private volatile boolean synced;
    private volatile boolean closed;

    private MetadataWatcher(Builder b) {
        this.namespaces = List.copyOf(b.namespaces);
        this.apiClient = b.apiClient;
        this.customObjects = new CustomObjectsApi(apiClient);
        OkHttpClient base = apiClient.getHttpClient();
        this.listHttp = base.newBuilder()
                .readTimeout(Duration.ofSeconds(60))
                .build();
        this.watchHttp = base.newBuilder()
                .readTimeout(b.watchTimeout.plus(Duration.ofSeconds(30)))
                .build();
        this.metrics = b.metrics;
        this.openTimeout = b.openTimeout;
        this.watchTimeout = b.watchTimeout;
        this.backoffInitial = b.backoffInitial;
        this.backoffMax = b.backoffMax;
        this.parser = new MetadataParser(b.limits);
        this.catalog = new Catalog(b.limits, b.metrics);
        this.pageObserver = b.pageObserver;
        this.clock = b.clock;
        this.unsynced = new AtomicInteger(namespaces.size());
    }

    /**
     * A builder.
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts one watcher thread per namespace. Idempotent.
     */
    public synchronized MetadataWatcher start() {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        if (started.compareAndSet(false, true)) {
            for (String ns : namespaces) {
                Worker w = new Worker(ns);
                workers.add(w);
                w.thread = Thread.ofVirtual().name("metadata-watch-" + ns).start(w::run);
            }
        }
        return this;
    }

    @Override
    public boolean isSynced() {
        return synced;
    }

    /**
     * Waits until every watched namespace has completed its initial list.
     *
     * @param timeout bound
     * @return whether the view is synced
     * @throws InterruptedException when interrupted
     */
    public boolean awaitSynced(Duration timeout) throws InterruptedException {
        return syncedLatch.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public Advertisement check(PublisherKey key) {
        Objects.requireNonNull(key, "key");
        if (!synced) {
            return Advertisement.NOT_SYNCED;
        }
        return catalog.snapshot().advertises(key) ? Advertisement.ADVERTISED : Advertisement.NOT_ADVERTISED;
    }

    @Override
    public AutoCloseable onChange(Runnable listener) {
        Objects.requireNonNull(listener, "listener");
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /**
     * Resources held in all watched namespaces, advertising or not ({@code metadata_resources}).
     *
     * @return count
     */
    public int resourceCount() {
        return catalog.snapshot().resourceCount();
    }

    /**
     * Unique advertised publishers ({@code metadata_publishers}).
     *
     * @return count
     */
    public int publisherCount() {
        return catalog.snapshot().publisherCount();
    }

    /**
     * Publisher references held (duplicates across resources count; capped at 65,536).
     *
     * @return count
     */
    public int referenceCount() {
        return catalog.snapshot().totalReferences();
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
        for (Worker w : workers) {
            long at = w.confirmedAtMillis;
            if (at == 0) {
                return Optional.empty();
            }
            oldest = Math.min(oldest, at);
        }
        return workers.isEmpty() || !synced ? Optional.empty() : Optional.of(Instant.ofEpochMilli(oldest));
    }

    /** One namespace's last confirmation (tests). */
    Optional<Instant> lastSynced(String namespace) {
        for (Worker w : workers) {
            if (w.namespace.equals(namespace) && w.confirmedAtMillis != 0) {
                return Optional.of(Instant.ofEpochMilli(w.confirmedAtMillis));
            }
        }
        return Optional.empty();
    }

    /**
     * The watched namespaces.
     *
     * @return namespaces
     */
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
        closedLatch.countDown();
        for (Worker w : workers) {
            Call call = w.current;
            if (call != null) {
                call.cancel();
            }
            if (w.thread != null) {
                w.thread.interrupt();
            }
        }
        for (Worker w : workers) {
            try {
                if (w.thread != null && !w.thread.join(Duration.ofSeconds(10))) {
                    LOG.warn("metadata_watcher_not_stopped").field("namespace", w.namespace).log();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    Snapshot snapshot() {
        return catalog.snapshot();
    }

    /** Whether every watcher thread has ended (after {@link #close()}). */
    boolean isTerminated() {
        for (Worker w : workers) {
            if (w.thread != null && w.thread.isAlive()) {
                return false;
            }
        }
        return true;
    }

    private void fireChange() {
        for (Runnable l : listeners) {
            try {
                l.run();
            } catch (RuntimeException e) {
                LOG.warn("metadata_listener_failed").cause(e).log();
            }
        }
    }

    /** Ends a pass: why. */
    private static final class Restart extends Exception {
        private static final long serialVersionUID = 1L;
        private final RestartReason reason;

        Restart(RestartReason reason, String message) {
            super(message, null, false, false);
            this.reason = reason;
        }
    }

    /** One watched namespace: list, watch, restart, forever. */
    private final class Worker {
        private final String namespace;
        private final Backoff backoff = new Backoff(backoffInitial, backoffMax);
        private volatile Thread thread;
        private volatile Call current;
        private String resourceVersion;
        private boolean listed;
        /** Wall-clock millis of the last confirmation that this namespace's view is current (0: never). */
        private volatile long confirmedAtMillis;

        Worker(String namespace) {
            this.namespace = namespace;
        }

        void run() {
            while (!closed) {
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
                    reason = r.reason;
                    resourceVersion = null; // relist (R-META 2: the snapshot stays until it commits)
                    if (!closed) {
                        LOG.info("metadata_watch_restarting").field("namespace", namespace)
                                .field("reason", r.reason.label()).field("detail", r.getMessage()).log();
                    }
                } catch (RuntimeException e) {
                    // A bug must not end the namespace's thread for good: count, log, relist.
                    reason = RestartReason.ERROR;
                    resourceVersion = null;
                    if (!closed) {
                        LOG.warn("metadata_watch_failed").field("namespace", namespace).cause(e).log();
                    }
                }
                if (closed) {
                    return;
                }
                metrics.watchRestarted(reason);
                if (healthy) {
                    backoff.reset();
                    continue; // a watch that delivered events and ended: resume at once
                }
                try {
                    if (closedLatch.await(backoff.next().toNanos(), TimeUnit.NANOSECONDS)) {
                        return;
                    }
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        private void list() throws Restart {
            try (Catalog.Listing listing = catalog.startListing(namespace)) {
                list(listing);
            }
        }

        private void list(Catalog.Listing listing) throws Restart {
            long started = System.nanoTime();
            String token = null;
            String rv = null;
            int page = 0;
            do {
                Request request = request(false, token);
                try (Response response = open(listHttp.newCall(request))) {
                    MetadataParser.ListPage p = parser.readList(body(response).byteStream(), listing::add);
                    pageObserver.accept(namespace, p.items());
                    page++;
                    token = p.continueToken();
                    if (p.resourceVersion() != null) {
                        rv = p.resourceVersion();
                    }
                } catch (IOException e) {
                    throw classify(e);
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
                if (unsynced.decrementAndGet() == 0) {
                    synced = true;
                    syncedLatch.countDown();
                }
            }
            int pages = page;
            LOG.debug("metadata_listed").field("namespace", namespace).field("resources", listing.size())
                    .field("pages", pages).log();
            fireChange();
        }

        /** Watches from the current resourceVersion; returns whether any event arrived before a clean end. */
        private boolean watch() throws Restart {
            Request request = request(true, null);
            boolean any = false;
            try (Response response = open(watchHttp.newCall(request));
                 MetadataParser.EventReader events = parser.events(body(response).byteStream())) {
                confirmed(); // the server accepted the resourceVersion: nothing was missed up to now
                MetadataParser.WatchEvent e;
                while (!closed && (e = events.next()) != null) {
                    any = true;
                    apply(e);
                    confirmed();
                }
            } catch (IOException e) {
                throw classify(e);
            }
            return any;
        }

        private void apply(MetadataParser.WatchEvent e) throws Restart {
            ParsedResource object = e.object();
            switch (e.type()) {
                case "ADDED", "MODIFIED" -> {
                    catalog.upsert(namespace, object);
                    advance(object);
                    fireChange();
                }
                case "DELETED" -> {
                    if (object.wellFormed()) {
                        catalog.delete(namespace, object.name());
                    } else {
                        metrics.skipped(SkipReason.MALFORMED_RESOURCE);
                    }
                    advance(object);
                    fireChange();
                }
                case "BOOKMARK" -> advance(object);
                case "ERROR" -> throw new Restart(object.statusCode() == 410 ? RestartReason.EXPIRED
                        : RestartReason.ERROR, "ERROR event, code " + object.statusCode());
                default -> throw new Restart(RestartReason.ERROR, "unknown event type");
            }
        }

        private void confirmed() {
            confirmedAtMillis = clock.millis();
        }

        private void advance(ParsedResource object) {
            if (object.resourceVersion() != null && !object.resourceVersion().isEmpty()) {
                resourceVersion = object.resourceVersion();
            }
        }

        private Request request(boolean watch, String token) throws Restart {
            try {
                CustomObjectsApi.APIlistNamespacedCustomObjectRequest r =
                        customObjects.listNamespacedCustomObject(GROUP, VERSION, namespace, PLURAL);
                if (watch) {
                    r = r.watch(true).allowWatchBookmarks(true).resourceVersion(resourceVersion)
                            .timeoutSeconds((int) Math.max(1, watchTimeout.toSeconds()));
                } else {
                    r = r.limit(PAGE_SIZE)._continue(token);
                }
                return r.buildCall(null).request();
            } catch (ApiException | RuntimeException e) {
                throw new Restart(RestartReason.ERROR, "cannot build request: " + e.getClass().getSimpleName());
            }
        }

        /**
         * Executes a call whose response head must arrive within the opening deadline; a 410 is
         * {@code expired}, any other non-200 status {@code error}.
         */
        private Response open(Call call) throws Restart, IOException {
            // 0 = waiting, 1 = opened, 2 = timed out
            AtomicInteger state = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(1);
            current = call;
            if (closed) {
                call.cancel();
            }
            Thread.ofVirtual().name("metadata-open-timer").start(() -> {
                try {
                    if (!done.await(openTimeout.toNanos(), TimeUnit.NANOSECONDS) && state.compareAndSet(0, 2)) {
                        call.cancel();
                    }
                } catch (InterruptedException ignored) {
                    // ends with the call
                }
            });
            Response response;
            try {
                response = call.execute();
            } catch (IOException e) {
                if (state.get() == 2) {
                    throw new Restart(RestartReason.TIMEOUT, "response not opened within " + openTimeout);
                }
                throw e;
            } finally {
                done.countDown();
            }
            if (!state.compareAndSet(0, 1)) {
                response.close();
                throw new Restart(RestartReason.TIMEOUT, "response not opened within " + openTimeout);
            }
            if (response.code() != 200) {
                int code = response.code();
                response.close();
                throw new Restart(code == 410 ? RestartReason.EXPIRED : RestartReason.ERROR, "HTTP " + code);
            }
            return response;
        }

        private ResponseBody body(Response response) throws Restart {
            ResponseBody body = response.body();
            if (body == null) {
                throw new Restart(RestartReason.ERROR, "response without body");
            }
            return body;
        }

        private Restart classify(IOException e) {
            if (e instanceof JsonProcessingException || e instanceof MetadataParser.MalformedException) {
                return new Restart(RestartReason.ERROR, "malformed response: " + e.getClass().getSimpleName());
            }
            if (e instanceof InterruptedIOException && closed) {
                return new Restart(RestartReason.DISCONNECTED, "closing");
            }
            return new Restart(RestartReason.DISCONNECTED, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
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

        /**
         * The Kubernetes namespaces to watch ({@code watch_namespaces}, 1 to 32).
         */
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

        /**
         * Counter hooks.
         */
        public Builder metrics(MetadataMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /**
         * Bound on opening any list or watch response (R-META 5: 30 s).
         *
         * @param timeout deadline for the response head
         */
        public Builder openTimeout(Duration timeout) {
            this.openTimeout = positive(timeout);
            return this;
        }

        /**
         * The {@code timeoutSeconds} asked of the server for each watch (5 minutes by default).
         *
         * @param timeout watch length, whole seconds
         */
        public Builder watchTimeout(Duration timeout) {
            this.watchTimeout = positive(timeout);
            return this;
        }

        /**
         * Jittered exponential backoff between failed passes (1 s to 60 s by default).
         *
         * @param initial first delay
         * @param max     largest delay
         */
        public Builder backoff(Duration initial, Duration max) {
            new Backoff(initial, max);
            this.backoffInitial = initial;
            this.backoffMax = max;
            return this;
        }

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
         * Builds the view (not started).
         *
         * @return view
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
