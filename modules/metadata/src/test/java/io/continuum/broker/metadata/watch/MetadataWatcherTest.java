package io.continuum.broker.metadata.watch;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.CountingMetrics;
import io.continuum.broker.metadata.MetadataMetrics;
import io.continuum.broker.metadata.MetadataParserTest;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.RestartReason;
import io.continuum.broker.metadata.SkipReason;
import io.continuum.broker.metadata.internal.Limits;
import io.continuum.broker.testing.kube.Fault;
import io.continuum.broker.testing.kube.FakeKubeApi;
import io.continuum.broker.testing.kube.RecordedRequest;
import io.continuum.broker.testing.kube.RequestKind;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.Config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The view against the in-process fake API server with the real client-java (no mocks): R-BEH 1,
 * R-META 1, 2, 5, 6, R-MET watch restarts, revocation (onChange).
 */
class MetadataWatcherTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    private final CountingMetrics metrics = new CountingMetrics();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private FakeKubeApi api;

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : closeables.reversed()) {
            c.close();
        }
    }

    private FakeKubeApi api(Consumer<RecordedRequest> onRequest) {
        api = FakeKubeApi.builder().onRequest(onRequest).build();
        closeables.add(api);
        return api;
    }

    private FakeKubeApi api() {
        return api(r -> {
        });
    }

    private MetadataWatcher.Builder watcher(String... namespaces) throws IOException {
        ApiClient client = Config.fromConfig(api.kubeconfig().toString());
        return MetadataWatcher.builder()
                .apiClient(client)
                .namespaces(List.of(namespaces))
                .metrics(metrics)
                .backoff(Duration.ofMillis(1), Duration.ofMillis(20));
    }

    private MetadataWatcher start(MetadataWatcher.Builder builder) throws IOException {
        MetadataWatcher w = builder.build();
        closeables.add(w);
        return w.start();
    }

    /** Starts a watcher of "ns1" and returns it synced, with its watch open on the API server. */
    private MetadataWatcher startWatching(MetadataWatcher.Builder builder) throws Exception {
        MetadataWatcher w = start(builder);
        assertTrue(w.awaitSynced(WAIT));
        api.awaitOpenWatches("ns1", 1, WAIT);
        return w;
    }

    static String resource(String name, String... endpoints) {
        StringBuilder channels = new StringBuilder();
        for (int i = 0; i < endpoints.length; i++) {
            if (i > 0) {
                channels.append(',');
            }
            channels.append("\"dynamo/backend/kv/").append(i).append("\":{\"namespace\":\"dynamo\",\"transport\":")
                    .append("{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"").append(endpoints[i]).append("\"}}}");
        }
        return "{\"apiVersion\":\"nvidia.com/v1alpha1\",\"kind\":\"DynamoWorkerMetadata\",\"metadata\":{\"name\":\""
                + name + "\"},\"spec\":{\"data\":{\"endpoints\":{\"x\":\"10.9.9.9:1/1/generate\"},"
                + "\"model_cards\":{},\"event_channels\":{" + channels + "}}}}";
    }

    static PublisherKey key(String host, int port) {
        return PublisherKey.of("dynamo", host, port);
    }

    /** Collects onChange notifications so tests can wait for the next one. */
    private static final class Changes implements Runnable {
        final LinkedBlockingQueue<Integer> queue = new LinkedBlockingQueue<>();
        final AtomicInteger count = new AtomicInteger();

        @Override
        public void run() {
            queue.add(count.incrementAndGet());
        }

        void await() throws InterruptedException {
            assertTrue(queue.poll(WAIT.toSeconds(), TimeUnit.SECONDS) != null, "no onChange within " + WAIT);
        }
    }

    /**
     * R-META 5: pages of 32, each parsed from the response stream before the next is asked for. The fake
     * server's request log and the parser's page hook share one ordered log.
     */
    @Test
    void listsPagesOf32AndParsesEachBeforeAskingForTheNext() throws Exception {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        api(r -> {
            if (r.kind() == RequestKind.LIST) {
                log.add("request limit=" + r.param("limit") + " continue=" + (r.param("continue") != null));
            }
        });
        for (int i = 0; i < 100; i++) {
            api.put("ns1", resource(String.format("w%03d", i), "tcp://10.1.0." + (i + 1) + ":5557"));
        }
        MetadataWatcher w = start(watcher("ns1").pageObserver((ns, items) -> log.add("parsed " + items)));
        assertTrue(w.awaitSynced(WAIT));
        assertEquals(List.of(
                "request limit=32 continue=false", "parsed 32",
                "request limit=32 continue=true", "parsed 32",
                "request limit=32 continue=true", "parsed 32",
                "request limit=32 continue=true", "parsed 4"), log);
        assertEquals(100, w.resourceCount());
        assertEquals(100, w.publisherCount());
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.1.0.100", 5557)));
        // the watch starts from the list's resourceVersion, with bookmarks and a server-side timeout
        RecordedRequest watch = api.awaitRequest(r -> r.kind() == RequestKind.WATCH, WAIT);
        assertEquals(Long.toString(api.resourceVersion()), watch.param("resourceVersion"));
        assertEquals("true", watch.param("allowWatchBookmarks"));
        assertEquals("300", watch.param("timeoutSeconds"));
    }

    /**
     * R-META 5: a page is parsed as it streams in. The fake server sends 10 items of a 32-item page and
     * stalls until the view has counted a skip in the 5th of them; a client that buffered whole pages
     * before parsing would never get there (the test would time out).
     */
    @Test
    void pageIsParsedFromTheStreamNotBufferedWhole() throws Exception {
        api();
        for (int i = 0; i < 40; i++) {
            // w004 has no spec.data: the parser counts no_data while reading it
            api.put("ns1", i == 4 ? "{\"metadata\":{\"name\":\"w004\"}}"
                    : resource(String.format("w%03d", i), "tcp://10.12.0." + (i + 1) + ":5557"));
        }
        CountDownLatch resume = new CountDownLatch(1);
        api.inject(RequestKind.LIST, Fault.stallMidBody(10, resume));
        MetadataMetrics releasing = new MetadataMetrics() {
            @Override
            public void skipped(SkipReason reason) {
                metrics.skipped(reason);
                if (reason == SkipReason.NO_DATA) {
                    resume.countDown();
                }
            }
        };
        MetadataWatcher w = start(watcher("ns1").metrics(releasing));
        assertTrue(w.awaitSynced(WAIT));
        assertEquals(40, w.resourceCount());
        assertEquals(1, metrics.skipCount(SkipReason.NO_DATA));
    }

    /** R-BEH 1, R-META 1: nothing is advertised until EVERY watched namespace finished its initial list. */
    @Test
    void syncedOnlyAfterAllNamespacesListed() throws Exception {
        api();
        api.put("ns1", resource("a", "tcp://10.2.0.1:5557"));
        api.put("ns2", resource("b", "tcp://10.2.0.2:5557"));
        api.inject(RequestKind.LIST, Fault.hang()); // the first namespace to ask hangs
        Changes changes = new Changes();
        MetadataWatcher w = watcher("ns1", "ns2").openTimeout(Duration.ofMinutes(5)).build();
        closeables.add(w);
        w.onChange(changes);
        assertFalse(w.isSynced());
        w.start();
        changes.await(); // the other namespace committed its list
        assertEquals(1, w.resourceCount());
        assertFalse(w.isSynced());
        assertEquals(Advertisement.NOT_SYNCED, w.check(key("10.2.0.1", 5557)));
        assertEquals(Advertisement.NOT_SYNCED, w.check(key("10.2.0.2", 5557)));

        api.awaitRequest(r -> r.kind() == RequestKind.LIST && r.sequence() >= 2, WAIT); // both have asked
        api.releaseHangs(); // the hung list fails (disconnected) and is retried
        assertTrue(w.awaitSynced(WAIT));
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.2.0.1", 5557)));
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.2.0.2", 5557)));
        assertEquals(Advertisement.NOT_ADVERTISED, w.check(key("10.2.0.3", 5557)));
    }

    /** Revocation: a DELETED or MODIFIED event deauthorizes at once and fires onChange. */
    @Test
    void deletesAndModificationsDeauthorizeAndFireOnChange() throws Exception {
        api();
        api.put("ns1", resource("a", "tcp://10.3.0.1:5557"));
        api.put("ns1", resource("b", "tcp://10.3.0.2:5557"));
        MetadataWatcher w = startWatching(watcher("ns1"));
        Changes changes = new Changes();
        w.onChange(changes);

        api.delete("ns1", "a");
        changes.await();
        assertEquals(Advertisement.NOT_ADVERTISED, w.check(key("10.3.0.1", 5557)));
        assertEquals(1, w.resourceCount());

        api.put("ns1", resource("b", "tcp://10.3.0.3:5557"));
        changes.await();
        assertEquals(Advertisement.NOT_ADVERTISED, w.check(key("10.3.0.2", 5557)));
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.3.0.3", 5557)));

        api.put("ns1", resource("c", "tcp://[fd00::3]:5557"));
        changes.await();
        assertEquals(Advertisement.ADVERTISED, w.check(PublisherKey.of("dynamo", "fd00:0:0::3", 5557)));
        assertEquals(2, w.publisherCount());
        assertEquals(Map.of(), metrics.restartCounts());
    }

    /**
     * R-META 2: during an outage the last snapshot is kept (a deleted endpoint stays dialable, the view
     * stays synced); the relist replaces it atomically: a publisher present before and after is never
     * seen missing by a concurrent reader.
     */
    @Test
    void snapshotKeptDuringOutageAndReplacedAtomicallyAfterRelist() throws Exception {
        api();
        api.put("ns1", resource("a", "tcp://10.4.0.1:5557"));
        api.put("ns1", resource("b", "tcp://10.4.0.2:5557"));
        MetadataWatcher w = startWatching(watcher("ns1"));

        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger flickers = new AtomicInteger();
        AtomicInteger reads = new AtomicInteger();
        // A platform thread: this loop never blocks, and a virtual one would hold its carrier, so with one core
        // (one carrier) the watcher's own virtual thread would not run again. Stopped after the test even when an
        // assertion fails first, so it cannot spin on under the tests that follow.
        Thread reader = Thread.ofPlatform().start(() -> {
            while (!stop.get()) {
                if (w.check(key("10.4.0.2", 5557)) != Advertisement.ADVERTISED) {
                    flickers.incrementAndGet();
                }
                reads.incrementAndGet();
            }
        });
        closeables.add(() -> {
            stop.set(true);
            reader.join();
        });

        Changes duringOutage = new Changes();
        w.onChange(duringOutage);
        api.inject(RequestKind.LIST, Fault.status(500));
        api.inject(RequestKind.LIST, Fault.status(503));
        api.inject(RequestKind.LIST, Fault.hang());
        long listsBefore = api.requests().stream().filter(r -> r.kind() == RequestKind.LIST).count();
        api.dropWatches();
        metrics.awaitRestarts(RestartReason.DISCONNECTED, 1, WAIT);
        metrics.awaitRestarts(RestartReason.ERROR, 2, WAIT);
        api.awaitRequest(r -> r.kind() == RequestKind.LIST && r.sequence() > 0
                && api.requests().stream().filter(x -> x.kind() == RequestKind.LIST).count() >= listsBefore + 3, WAIT);
        // the outage: the view does not see these
        api.delete("ns1", "a");
        api.put("ns1", resource("c", "tcp://10.4.0.3:5557"));
        assertTrue(w.isSynced());
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.4.0.1", 5557)));
        assertEquals(Advertisement.NOT_ADVERTISED, w.check(key("10.4.0.3", 5557)));

        assertEquals(0, duringOutage.count.get()); // never fired merely because the API is unreachable
        Changes changes = new Changes();
        w.onChange(changes);
        api.releaseHangs();
        changes.await(); // the relist committed
        assertEquals(Advertisement.NOT_ADVERTISED, w.check(key("10.4.0.1", 5557)));
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.4.0.3", 5557)));
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.4.0.2", 5557)));
        assertTrue(w.isSynced());
        stop.set(true);
        reader.join();
        assertTrue(reads.get() > 0);
        assertEquals(0, flickers.get());
        // the dropped watch (the released hang may also count, unless OkHttp silently retried the GET)
        assertTrue(metrics.restarts(RestartReason.DISCONNECTED) >= 1);
        assertEquals(2, metrics.restarts(RestartReason.ERROR));
    }

    /** R-META 5 and the 410 rule: an expired continue token restarts the list from the beginning. */
    @Test
    void expiredContinueTokenRestartsTheListFromTheStart() throws Exception {
        api();
        for (int i = 0; i < 70; i++) {
            api.put("ns1", resource(String.format("w%03d", i), "tcp://10.5.0." + (i + 1) + ":5557"));
        }
        AtomicBoolean expired = new AtomicBoolean();
        MetadataWatcher w = start(watcher("ns1").pageObserver((ns, items) -> {
            if (expired.compareAndSet(false, true)) {
                api.expireContinueTokens(); // between page 1 and page 2
            }
        }));
        assertTrue(w.awaitSynced(WAIT));
        assertEquals(1, metrics.restarts(RestartReason.EXPIRED));
        List<String> lists = api.requests().stream().filter(r -> r.kind() == RequestKind.LIST)
                .map(r -> r.param("continue") == null ? "first" : "continue").toList();
        assertEquals(List.of("first", "continue", "first", "continue", "continue"), lists);
        assertEquals(70, w.resourceCount());
    }

    /** R-META 5, R-MET: opening a response is bounded; a hang counts as `timeout` (deadline shrunk here). */
    @Test
    void openingTimeoutIsCountedAsTimeout() throws Exception {
        api();
        api.put("ns1", resource("a", "tcp://10.6.0.1:5557"));
        api.inject(RequestKind.LIST, Fault.hang());
        api.inject(RequestKind.WATCH, Fault.hang());
        MetadataWatcher w = start(watcher("ns1").openTimeout(Duration.ofMillis(300)));
        metrics.awaitRestarts(RestartReason.TIMEOUT, 2, WAIT); // the list, then the watch
        assertTrue(w.awaitSynced(WAIT));
        api.awaitOpenWatches("ns1", 1, WAIT);
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.6.0.1", 5557)));
        assertEquals(Map.of(RestartReason.TIMEOUT, 2), metrics.restartCounts());
    }

    /** R-MET: every restart reason, each from a real failure of the fake server. */
    @Test
    void restartReasonsAreCounted() throws Exception {
        api();
        api.put("ns1", resource("a", "tcp://10.7.0.1:5557"));
        MetadataWatcher w = start(watcher("ns1"));
        assertTrue(w.awaitSynced(WAIT));

        long seq = 0;
        seq = api.awaitNewWatch("ns1", seq, WAIT);
        api.endWatches();
        metrics.awaitRestarts(RestartReason.CLOSED, 1, WAIT);

        seq = api.awaitNewWatch("ns1", seq, WAIT);
        api.sendWatchError("ns1", 410);
        metrics.awaitRestarts(RestartReason.EXPIRED, 1, WAIT);

        seq = api.awaitNewWatch("ns1", seq, WAIT);
        api.sendWatchError("ns1", 500);
        metrics.awaitRestarts(RestartReason.ERROR, 1, WAIT);

        seq = api.awaitNewWatch("ns1", seq, WAIT);
        api.sendWatchLine("ns1", "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\"}");  // unterminated
        api.sendWatchLine("ns1", "]");
        metrics.awaitRestarts(RestartReason.ERROR, 2, WAIT);

        seq = api.awaitNewWatch("ns1", seq, WAIT);
        api.sendWatchLine("ns1", "{\"type\":\"UNHEARD_OF\",\"object\":{}}");
        metrics.awaitRestarts(RestartReason.ERROR, 3, WAIT);

        seq = api.awaitNewWatch("ns1", seq, WAIT);
        api.inject(RequestKind.LIST, Fault.status(410));
        api.dropWatches();
        metrics.awaitRestarts(RestartReason.DISCONNECTED, 1, WAIT);
        metrics.awaitRestarts(RestartReason.EXPIRED, 2, WAIT);

        seq = api.awaitNewWatch("ns1", seq, WAIT);
        Changes changes = new Changes();
        w.onChange(changes);
        api.put("ns1", resource("b", "tcp://10.7.0.2:5557"));
        changes.await(); // the watch saw b: its resourceVersion is b's
        api.put("elsewhere", resource("x", "tcp://10.7.0.9:5557")); // newer resourceVersion, unseen by ns1
        api.compact();
        api.endWatches(); // the rewatch from b's resourceVersion is now too old: ERROR 410
        metrics.awaitRestarts(RestartReason.EXPIRED, 3, WAIT);
        seq = api.awaitNewWatch("ns1", seq, WAIT);
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.7.0.2", 5557)));
        assertEquals(Map.of(RestartReason.CLOSED, 2, RestartReason.EXPIRED, 3, RestartReason.ERROR, 3,
                RestartReason.DISCONNECTED, 1), metrics.restartCounts());
        assertTrue(w.isSynced());
    }

    /** A BOOKMARK advances the resourceVersion a closed watch resumes from (no relist). */
    @Test
    void bookmarksAdvanceTheResumeVersion() throws Exception {
        api();
        api.put("ns1", resource("a", "tcp://10.10.0.1:5557"));
        MetadataWatcher w = start(watcher("ns1"));
        assertTrue(w.awaitSynced(WAIT));
        long seq = api.awaitNewWatch("ns1", 0, WAIT);
        api.put("elsewhere", resource("x", "tcp://10.10.0.9:5557")); // unseen by the ns1 watch
        long bookmarked = api.resourceVersion();
        api.bookmark("ns1");
        api.endWatches();
        long next = api.awaitNewWatch("ns1", seq, WAIT);
        RecordedRequest rewatch = api.requests().stream().filter(r -> r.sequence() == next).findFirst().orElseThrow();
        assertEquals(Long.toString(bookmarked), rewatch.param("resourceVersion"));
        assertEquals(1, api.requests().stream().filter(r -> r.kind() == RequestKind.LIST).count());
        assertEquals(Map.of(RestartReason.CLOSED, 1), metrics.restartCounts());
    }

    /** A list whose connection drops mid-body counts `disconnected`, then the list is retried from the start. */
    @Test
    void listDroppedMidBodyIsDisconnectedAndRetried() throws Exception {
        api();
        api.put("ns1", resource("a", "tcp://10.11.0.1:5557"));
        api.inject(RequestKind.LIST, Fault.dropMidBody());
        MetadataWatcher w = start(watcher("ns1"));
        assertTrue(w.awaitSynced(WAIT));
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.11.0.1", 5557)));
        assertEquals(Map.of(RestartReason.DISCONNECTED, 1), metrics.restartCounts());
    }

    /** Malformed resources in watch events are skipped and counted; the watch continues (R-META 7). */
    @Test
    void malformedWatchObjectsAreSkippedNotFatal() throws Exception {
        api();
        MetadataWatcher w = startWatching(watcher("ns1"));
        Changes changes = new Changes();
        w.onChange(changes);
        api.put("ns1", "bad-1", "{\"metadata\":{},\"spec\":{}}");
        changes.await();
        api.put("ns1", MetadataParserTest.fixture("invalid-endpoints.json"));
        changes.await();
        assertEquals(1, metrics.skipCount(SkipReason.MALFORMED_RESOURCE));
        assertEquals(24, metrics.skipCount(SkipReason.INVALID_ENDPOINT));
        assertEquals(3, w.publisherCount());
        assertEquals(Map.of(), metrics.restartCounts());
    }

    /** R-META 6 through real watch events (caps shrunk to 4 references): stale addresses go first. */
    @Test
    void watchUpdateOverTheTotalCapDeauthorizesTheOldAdvertisementFirst() throws Exception {
        api();
        api.put("ns1", resource("a", "tcp://10.8.0.1:1", "tcp://10.8.0.1:2"));
        api.put("ns1", resource("b", "tcp://10.8.0.2:1", "tcp://10.8.0.2:2"));
        MetadataWatcher w = startWatching(watcher("ns1").limits(new Limits(16_384, 1_024, 256, 4, 1_024, 65_536, 256)));
        assertEquals(4, w.referenceCount());
        Changes changes = new Changes();
        w.onChange(changes);

        api.put("ns1", resource("a", "tcp://10.8.0.3:1", "tcp://10.8.0.3:2", "tcp://10.8.0.3:3"));
        changes.await();
        assertEquals(Advertisement.NOT_ADVERTISED, w.check(key("10.8.0.1", 1)));
        assertEquals(Advertisement.NOT_ADVERTISED, w.check(key("10.8.0.1", 2)));
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.8.0.3", 1)));
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.8.0.3", 2)));
        assertEquals(Advertisement.NOT_ADVERTISED, w.check(key("10.8.0.3", 3)));
        assertEquals(Advertisement.ADVERTISED, w.check(key("10.8.0.2", 2)));
        assertEquals(4, w.referenceCount());
        assertEquals(1, metrics.skipCount(SkipReason.TOTAL_CAP));
    }

    /** close() ends every thread, also one blocked in a hung request. */
    @Test
    void closeStopsEveryThread() throws Exception {
        api();
        api.inject(RequestKind.LIST, Fault.hang());
        MetadataWatcher w = start(watcher("ns1", "ns2").openTimeout(Duration.ofMinutes(5)));
        api.awaitRequest(r -> r.kind() == RequestKind.WATCH, WAIT); // one namespace is watching
        assertFalse(w.isTerminated());
        w.close(); // the other is blocked in the hung list: close must cancel it, not wait 5 minutes
        assertTrue(w.isTerminated());
        assertFalse(w.isSynced());
    }
}
