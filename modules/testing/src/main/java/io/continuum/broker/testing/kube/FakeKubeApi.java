package io.continuum.broker.testing.kube;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * An in-process fake of the Kubernetes API for the {@code DynamoWorkerMetadata} custom resource
 * (dynamo-worker-metadata.md): plain HTTP/1.1 on 127.0.0.1, good enough for client-java.
 * <ul>
 *     <li>Lists with real paging: {@code limit}, {@code continue} tokens over a consistent snapshot,
 *     {@link #expireContinueTokens()} makes outstanding tokens answer {@code 410 Gone} with a
 *     {@code Status} body.</li>
 *     <li>A global {@code resourceVersion}; watches from a resourceVersion replay later events, then
 *     stream ADDED, MODIFIED, DELETED, BOOKMARK (when asked with {@code allowWatchBookmarks}) and ERROR
 *     events, chunked; {@code timeoutSeconds} ends a watch cleanly; a watch from a compacted
 *     resourceVersion gets an ERROR event with code 410.</li>
 *     <li>Faults on command: {@link #inject} a status, a hang ({@link #releaseHangs()} resets it), a
 *     mid-body drop or a mid-page stall for the next request of a kind; {@link #endWatches()},
 *     {@link #dropWatches()}, {@link #sendWatchError(String, int)}, {@link #sendWatchLine(String, String)},
 *     {@link #bookmark(String)}, {@link #compact()}, {@link #expireContinueTokens()}.</li>
 *     <li>Resources are raw JSON strings, served as given (so tests can serve malformed things), with
 *     {@code metadata.resourceVersion} inserted into the first {@code "metadata"} object of the text.</li>
 *     <li>Every request is recorded ({@link #requests()}, {@link Builder#onRequest}); tests wait with
 *     {@link #awaitRequest}, {@link #awaitOpenWatches} and {@link #awaitNewWatch}, never by sleeping.</li>
 * </ul>
 * Start one with {@code FakeKubeApi.builder().build()}, point client-java at {@link #kubeconfig()}.
 * The state lives in {@link ResourceStore}, the wire in {@link KubeHttpServer}; this class is the
 * surface tests use.
 */
public final class FakeKubeApi implements Closeable {
    private final ResourceStore store = new ResourceStore();
    private final KubeHttpServer http;
    private final Path kubeconfig;
    private final CountDownLatch closed = new CountDownLatch(1);

    private FakeKubeApi(Builder builder) throws IOException {
        this.http = new KubeHttpServer(store, builder.requestListener);
        try {
            this.kubeconfig = Kubeconfig.write(http.url());
        } catch (IOException e) {
            http.close();
            throw e;
        }
    }

    /**
     * A builder.
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds and starts a {@link FakeKubeApi}. */
    public static final class Builder {
        private Consumer<RecordedRequest> requestListener = r -> {
        };

        private Builder() {
        }

        /**
         * Called for every request as it arrives, before it is answered, on the connection's thread.
         */
        public Builder onRequest(Consumer<RecordedRequest> listener) {
            this.requestListener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Starts the server.
         *
         * @return the running server
         */
        public FakeKubeApi build() {
            try {
                return new FakeKubeApi(this);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /**
     * The server's base URL.
     *
     * @return {@code http://127.0.0.1:PORT}
     */
    public String url() {
        return http.url();
    }

    /**
     * A kubeconfig file (bearer token {@code fake-token}) pointing at this server, deleted on close.
     *
     * @return path
     */
    public Path kubeconfig() {
        return kubeconfig;
    }

    /**
     * Creates or replaces a resource, named by its {@code metadata.name} (or a generated name when it
     * has none, for malformed resources). Open watches get ADDED or MODIFIED.
     *
     * @param json      raw JSON, served as is
     * @return the name it is stored under
     */
    public String put(String namespace, String json) {
        return store.put(namespace, json);
    }

    /**
     * Creates or replaces a resource under an explicit name.
     *
     * @param name      name to store it under
     * @param json      raw JSON, served as is
     */
    public void put(String namespace, String name, String json) {
        store.put(namespace, name, json);
    }

    /**
     * Deletes a resource; open watches get DELETED.
     *
     * @return whether it existed
     */
    public boolean delete(String namespace, String name) {
        return store.delete(namespace, name);
    }

    /**
     * Sends a BOOKMARK with the current resourceVersion to the namespace's open watches that asked for
     * bookmarks.
     */
    public void bookmark(String namespace) {
        store.bookmark(namespace);
    }

    /**
     * Sends an ERROR event with a Status of this code to the namespace's open watches, then ends them.
     *
     * @param code      status code (410 means "relist")
     */
    public void sendWatchError(String namespace, int code) {
        store.sendWatchError(namespace, code);
    }

    /**
     * Writes a raw line (anything, even invalid JSON) to the namespace's open watches.
     *
     * @param line      raw text, sent as one chunk followed by a newline
     */
    public void sendWatchLine(String namespace, String line) {
        store.sendWatchLine(namespace, line);
    }

    /** Resets the connections of every request held by a {@link Fault.Hang}. */
    public void releaseHangs() {
        http.releaseHangs();
    }

    /** Ends every open watch cleanly (the server ended the watch). */
    public void endWatches() {
        store.commandAll(new ResourceStore.WatchCommand.End());
    }

    /** Resets the connection of every open watch in the middle of a chunk. */
    public void dropWatches() {
        store.commandAll(new ResourceStore.WatchCommand.Drop());
    }

    /** Makes every outstanding continue token answer {@code 410 Gone}. */
    public void expireContinueTokens() {
        store.expireContinueTokens();
    }

    /** Forgets the event history: a watch from any older resourceVersion gets ERROR 410. */
    public void compact() {
        store.compact();
    }

    /**
     * Applies a fault to the next request of this kind (faults queue up, one per request).
     *
     * @param kind  LIST or WATCH
     */
    public void inject(RequestKind kind, Fault fault) {
        store.inject(kind, fault);
    }

    /**
     * The current resourceVersion.
     *
     * @return resourceVersion
     */
    public long resourceVersion() {
        return store.resourceVersion();
    }

    /**
     * Every request received so far, in arrival order.
     *
     * @return requests
     */
    public List<RecordedRequest> requests() {
        return store.requests();
    }

    /**
     * Waits until a request matching {@code test} has arrived.
     *
     * @param test    condition
     * @param timeout bound
     * @return the first matching request
     * @throws AssertionError when none arrived in time
     */
    public RecordedRequest awaitRequest(Predicate<RecordedRequest> test, Duration timeout) {
        return store.awaitRequest(test, timeout);
    }

    /**
     * Waits until at least {@code count} watches of the namespace are open (replay written).
     *
     * @param count     how many
     * @param timeout   bound
     * @throws AssertionError when they did not open in time
     */
    public void awaitOpenWatches(String namespace, int count, Duration timeout) {
        store.awaitOpenWatches(namespace, count, timeout);
    }

    /**
     * Waits until a watch of the namespace opened by a request later than {@code afterSequence} is open
     * (a client that gave up on an older watch may not have been noticed yet; this ignores it).
     *
     * @param afterSequence request sequence the watch must come after (0 for any)
     * @param timeout       bound
     * @return the request sequence of the open watch
     * @throws AssertionError when none opened in time
     */
    public long awaitNewWatch(String namespace, long afterSequence, Duration timeout) {
        return store.awaitNewWatch(namespace, afterSequence, timeout);
    }

    @Override
    public void close() {
        if (closed.getCount() == 0) {
            return;
        }
        closed.countDown();
        http.close();
        try {
            Kubeconfig.delete(kubeconfig);
        } catch (IOException ignored) {
            // best effort: a temporary file
        }
    }
}
