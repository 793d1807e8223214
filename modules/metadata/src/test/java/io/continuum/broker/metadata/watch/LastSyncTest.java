package io.continuum.broker.metadata.watch;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import io.continuum.broker.metadata.CountingMetrics;
import io.continuum.broker.metadata.MetadataMetrics;
import io.continuum.broker.metadata.RestartReason;
import io.continuum.broker.testing.kube.FakeKubeApi;
import io.continuum.broker.testing.kube.Fault;
import io.continuum.broker.testing.kube.RequestKind;
import io.kubernetes.client.util.Config;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link MetadataWatcher#lastSynced()}, the source of the staleness metric: empty until every namespace
 * has listed, renewed by lists, watch opens and events (bookmarks included), the oldest namespace's value,
 * and standing still during an API outage while the snapshot keeps serving. Each completed list is reported
 * to {@link MetadataMetrics#listed}. Time is a settable clock, so nothing depends on how fast the machine is;
 * the watcher reads it once per confirmation, so a test moves time only after the confirmations it expects
 * have read it (a watch's opening is confirmed when its head arrives, after the server registered it and
 * possibly after a test's next step).
 */
class LastSyncTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final CountingMetrics metrics = new CountingMetrics();
    private final SetClock clock = new SetClock(1_000_000);
    private FakeKubeApi api;

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : closeables.reversed()) {
            c.close();
        }
    }

    private MetadataWatcher start(String... namespaces) throws IOException {
        return start(FakeKubeApi.builder(), namespaces);
    }

    private MetadataWatcher start(FakeKubeApi.Builder apiBuilder, String... namespaces) throws IOException {
        api = apiBuilder.build();
        closeables.add(api);
        MetadataWatcher w = MetadataWatcher.builder()
                .apiClient(Config.fromConfig(api.kubeconfig().toString()))
                .namespaces(List.of(namespaces))
                .metrics(metrics)
                .backoff(Duration.ofMillis(1), Duration.ofMillis(20))
                .clock(clock)
                .build();
        closeables.add(w);
        return w;
    }

    @Test
    void theOldestNamespaceDecidesAndEventsRenewIt() throws Exception {
        MetadataWatcher w = start("ns1", "ns2");
        api.put("ns1", MetadataWatcherTest.resource("a", "tcp://10.7.0.1:5557"));
        assertEquals(Optional.empty(), w.lastSynced());
        w.start();
        assertTrue(w.awaitSynced(WAIT));
        api.awaitOpenWatches("ns1", 1, WAIT);
        api.awaitOpenWatches("ns2", 1, WAIT);
        awaitConfirmations(4, "a list and a watch opening per namespace");
        assertEquals(Optional.of(at(1_000_000)), w.lastSynced(), "synced at the start time");
        assertTrue(metrics.lists() >= 2, "one completed list per namespace");

        clock.set(2_000_000);
        api.bookmark("ns1");
        await(() -> w.lastSynced("ns1").equals(Optional.of(at(2_000_000))), "ns1 renewed by a bookmark");
        assertEquals(Optional.of(at(1_000_000)), w.lastSynced(), "ns2 is the oldest");
        api.bookmark("ns2");
        await(() -> w.lastSynced().equals(Optional.of(at(2_000_000))), "both renewed by bookmarks");
    }

    @Test
    void aWatchOpeningConfirmsAtItsHeadWithNoEventYet() throws Exception {
        // The server moves time when the watch request arrives: only the opening can confirm 2,000,000.
        MetadataWatcher w = start(FakeKubeApi.builder().onRequest(r -> {
            if (r.kind() == RequestKind.WATCH) {
                clock.set(2_000_000);
            }
        }), "ns1");
        w.start();
        assertTrue(w.awaitSynced(WAIT));
        await(() -> w.lastSynced().equals(Optional.of(at(2_000_000))), "the opening confirmed, no event sent");
        assertEquals(2, clock.reads(), "the list and the opening");
    }

    @Test
    void anOutageFreezesTheTimeUntilTheRelistCommits() throws Exception {
        MetadataWatcher w = start("ns1");
        api.put("ns1", MetadataWatcherTest.resource("a", "tcp://10.7.0.2:5557"));
        w.start();
        assertTrue(w.awaitSynced(WAIT));
        api.awaitOpenWatches("ns1", 1, WAIT);
        awaitConfirmations(2, "the list and the watch opening");
        assertEquals(Optional.of(at(1_000_000)), w.lastSynced(), "synced");
        clock.set(2_000_000);
        api.bookmark("ns1");
        awaitConfirmations(3, "the bookmark");
        await(() -> w.lastSynced().equals(Optional.of(at(2_000_000))), "bookmark applied");

        clock.set(3_000_000);
        api.inject(RequestKind.LIST, Fault.hang());
        long listsBefore = lists();
        api.dropWatches();
        metrics.awaitRestarts(RestartReason.DISCONNECTED, 1, WAIT);
        await(() -> lists() > listsBefore, "the relist, held by the server");
        assertEquals(Optional.of(at(2_000_000)), w.lastSynced(), "no confirmation during the outage");
        assertTrue(w.isSynced(), "the snapshot keeps serving");

        clock.set(4_000_000);
        api.releaseHangs();
        await(() -> w.lastSynced().equals(Optional.of(at(4_000_000))), "the relist renews it");
    }

    /** Waits until the watcher has read the clock {@code n} times: nothing it confirms later reads an older time. */
    private void awaitConfirmations(long n, String what) {
        await(() -> clock.reads() >= n, what + " confirmed");
    }

    private long lists() {
        return api.requests().stream().filter(r -> r.kind() == RequestKind.LIST).count();
    }

    private static Instant at(long millis) {
        return Instant.ofEpochMilli(millis);
    }

    /** A clock the test sets, counting its reads. */
    private static final class SetClock extends Clock {
        private final AtomicLong millis;
        private final AtomicLong reads = new AtomicLong();

        SetClock(long millis) {
            this.millis = new AtomicLong(millis);
        }

        void set(long value) {
            millis.set(value);
        }

        long reads() {
            return reads.get();
        }

        @Override
        public long millis() {
            long value = millis.get();
            reads.incrementAndGet(); // after the value: a test that saw this read cannot change what it returned
            return value;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis());
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }
}
