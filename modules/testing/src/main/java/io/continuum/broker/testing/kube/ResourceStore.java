package io.continuum.broker.testing.kube;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The fake API server's state: resources per namespace, the global resourceVersion, the event history
 * watches replay from, list snapshots behind continue tokens, the open watches, queued faults and the
 * request log. One lock guards all of it, so a watch takes its backlog and registers in one step (no
 * event falls in between) and every wait re-checks on the one condition.
 */
final class ResourceStore {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private long resourceVersion = 1000;
    private long compactedBelow;
    private long nextSnapshotId;
    private final Map<String, TreeMap<String, Stored>> resources = new HashMap<>();
    private final List<Event> events = new ArrayList<>();
    private final Map<Long, ListSnapshot> snapshots = new HashMap<>();
    private final List<OpenWatch> watches = new ArrayList<>();
    private final Map<RequestKind, Queue<Fault>> faults = new EnumMap<>(RequestKind.class);
    private final List<RecordedRequest> requests = new ArrayList<>();

    private record Stored(long resourceVersion, String json) {
    }

    private record Event(long resourceVersion, String namespace, String line) {
    }

    /** The items of one list, fixed when its first page was asked for. */
    record ListSnapshot(long id, long resourceVersion, List<String> items) {
    }

    /** Commands to an open watch, carried out by the connection that serves it. */
    sealed interface WatchCommand {
        /** Write one event line. */
        record Line(String json) implements WatchCommand {
        }

        /** End the watch cleanly (the last chunk). */
        record End() implements WatchCommand {
        }

        /** Reset the connection in the middle of a chunk. */
        record Drop() implements WatchCommand {
        }
    }

    /** A watch whose connection is being served; {@code sequence} is the request's. */
    record OpenWatch(long sequence, String namespace, boolean bookmarks, LinkedBlockingQueue<WatchCommand> queue) {
    }

    /** A watch just registered and what it must write first. */
    record WatchStart(OpenWatch watch, List<String> backlog) {
    }

    // ---------------------------------------------------------------- resources

    String put(String namespace, String json) {
        lock.lock();
        try {
            String name = KubeJson.nameOf(json);
            if (name == null) {
                name = "unnamed-" + (resourceVersion + 1);
            }
            put(namespace, name, json);
            return name;
        } finally {
            lock.unlock();
        }
    }

    void put(String namespace, String name, String json) {
        lock.lock();
        try {
            long rv = ++resourceVersion;
            String served = KubeJson.withResourceVersion(json, rv);
            Stored previous = resources.computeIfAbsent(namespace, n -> new TreeMap<>()).put(name, new Stored(rv, served));
            emit(namespace, rv, previous == null ? "ADDED" : "MODIFIED", served);
        } finally {
            lock.unlock();
        }
    }

    boolean delete(String namespace, String name) {
        lock.lock();
        try {
            TreeMap<String, Stored> ns = resources.get(namespace);
            Stored previous = ns == null ? null : ns.remove(name);
            if (previous == null) {
                return false;
            }
            long rv = ++resourceVersion;
            emit(namespace, rv, "DELETED", KubeJson.withResourceVersion(previous.json(), rv));
            return true;
        } finally {
            lock.unlock();
        }
    }

    long resourceVersion() {
        lock.lock();
        try {
            return resourceVersion;
        } finally {
            lock.unlock();
        }
    }

    /** Forgets the event history: a watch from any older resourceVersion gets ERROR 410. */
    void compact() {
        lock.lock();
        try {
            compactedBelow = resourceVersion;
            events.clear();
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- lists

    /** Takes a consistent snapshot of the namespace for a first page. */
    ListSnapshot snapshot(String namespace) {
        lock.lock();
        try {
            List<String> items = new ArrayList<>();
            resources.getOrDefault(namespace, new TreeMap<>()).values().forEach(s -> items.add(s.json()));
            ListSnapshot snapshot = new ListSnapshot(++nextSnapshotId, resourceVersion, items);
            snapshots.put(snapshot.id(), snapshot);
            return snapshot;
        } finally {
            lock.unlock();
        }
    }

    /** The snapshot a continue token points into, or null once tokens have expired. */
    ListSnapshot continued(long id) {
        lock.lock();
        try {
            return snapshots.get(id);
        } finally {
            lock.unlock();
        }
    }

    /** Makes every outstanding continue token answer 410 Gone. */
    void expireContinueTokens() {
        lock.lock();
        try {
            snapshots.clear();
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- watches

    /**
     * Registers a watch from {@code from} (-1: from now) with the events after it as its backlog, both
     * under the lock; from a compacted resourceVersion the backlog is one ERROR 410 and the watch ends.
     */
    WatchStart openWatch(long requestSequence, String namespace, long from, boolean bookmarks) {
        OpenWatch watch = new OpenWatch(requestSequence, namespace, bookmarks, new LinkedBlockingQueue<>());
        List<String> backlog = new ArrayList<>();
        lock.lock();
        try {
            if (from >= 0 && from < compactedBelow) {
                backlog.add("{\"type\":\"ERROR\",\"object\":" + KubeJson.status(410) + "}");
                watch.queue().add(new WatchCommand.End());
            } else {
                for (Event e : events) {
                    if (e.namespace().equals(namespace) && e.resourceVersion() > from) {
                        backlog.add(e.line());
                    }
                }
            }
            watches.add(watch);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        return new WatchStart(watch, backlog);
    }

    void closeWatch(OpenWatch watch) {
        lock.lock();
        try {
            watches.remove(watch);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** A BOOKMARK at the current resourceVersion to the namespace's watches that asked for bookmarks. */
    void bookmark(String namespace) {
        lock.lock();
        try {
            String line = "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"DynamoWorkerMetadata\","
                    + "\"apiVersion\":\"nvidia.com/v1alpha1\",\"metadata\":{\"resourceVersion\":\""
                    + resourceVersion + "\"}}}";
            for (OpenWatch w : watches) {
                if (w.namespace().equals(namespace) && w.bookmarks()) {
                    w.queue().add(new WatchCommand.Line(line));
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** An ERROR event with this code to the namespace's watches, which then end and stop counting as open. */
    void sendWatchError(String namespace, int code) {
        lock.lock();
        try {
            for (OpenWatch w : List.copyOf(watches)) {
                if (w.namespace().equals(namespace)) {
                    w.queue().add(new WatchCommand.Line("{\"type\":\"ERROR\",\"object\":" + KubeJson.status(code) + "}"));
                    w.queue().add(new WatchCommand.End());
                    watches.remove(w);
                }
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void sendWatchLine(String namespace, String line) {
        lock.lock();
        try {
            for (OpenWatch w : watches) {
                if (w.namespace().equals(namespace)) {
                    w.queue().add(new WatchCommand.Line(line));
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Gives every open watch this command; they stop counting as open at once. */
    void commandAll(WatchCommand command) {
        lock.lock();
        try {
            for (OpenWatch w : watches) {
                w.queue().add(command);
            }
            watches.clear();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- requests and faults

    void inject(RequestKind kind, Fault fault) {
        lock.lock();
        try {
            faults.computeIfAbsent(kind, k -> new ArrayDeque<>()).add(fault);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Records a request and takes the fault queued for its kind, in one step: a test that sees the
     * request (awaitRequest) knows its fault has been taken.
     *
     * @param onTaken run under the lock with the fault before the request becomes visible
     */
    Fault arrived(RecordedRequest request, Consumer<Fault> onTaken) {
        lock.lock();
        try {
            Queue<Fault> queue = faults.get(request.kind());
            Fault fault = queue == null ? null : queue.poll();
            onTaken.accept(fault);
            requests.add(request);
            changed.signalAll();
            return fault;
        } finally {
            lock.unlock();
        }
    }

    List<RecordedRequest> requests() {
        lock.lock();
        try {
            return List.copyOf(requests);
        } finally {
            lock.unlock();
        }
    }

    RecordedRequest awaitRequest(Predicate<RecordedRequest> test, Duration timeout) {
        return await(() -> requests.stream().filter(test).findFirst().orElse(null), timeout,
                () -> "no matching request within " + timeout + "; got " + requests);
    }

    void awaitOpenWatches(String namespace, int count, Duration timeout) {
        await(() -> watches.stream().filter(w -> w.namespace().equals(namespace)).count() >= count ? Boolean.TRUE
                : null, timeout, () -> count + " watches of " + namespace + " not open within " + timeout);
    }

    long awaitNewWatch(String namespace, long afterSequence, Duration timeout) {
        return await(() -> watches.stream()
                        .filter(w -> w.namespace().equals(namespace) && w.sequence() > afterSequence)
                        .map(OpenWatch::sequence).findFirst().orElse(null), timeout,
                () -> "no new watch of " + namespace + " within " + timeout);
    }

    /** Waits, under the lock, until {@code found} returns non-null; re-checked on every change. */
    private <T> T await(Supplier<T> found, Duration timeout, Supplier<String> failure) {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (true) {
                T value = found.get();
                if (value != null) {
                    return value;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError(failure.get());
                }
                changed.awaitNanos(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } finally {
            lock.unlock();
        }
    }

    private void emit(String namespace, long rv, String type, String json) {
        String line = "{\"type\":\"" + type + "\",\"object\":" + json + "}";
        events.add(new Event(rv, namespace, line));
        for (OpenWatch w : watches) {
            if (w.namespace().equals(namespace)) {
                w.queue().add(new WatchCommand.Line(line));
            }
        }
    }
}
