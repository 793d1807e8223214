package io.continuum.broker.testing.kube;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

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
 */
public final class FakeKubeApi implements Closeable {
    private static final Pattern PATH = Pattern.compile(
            "/apis/nvidia\\.com/v1alpha1/namespaces/([^/]+)/dynamoworkermetadatas");
    private static final Pattern METADATA_OPEN = Pattern.compile("\"metadata\"\\s*:\\s*\\{");
    private static final JsonFactory JSON = new JsonFactory();

    private final ServerSocket server;
    private final Path kubeconfig;
    private final Consumer<RecordedRequest> requestListener;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Set<Socket> hung = ConcurrentHashMap.newKeySet();
    private final CountDownLatch closed = new CountDownLatch(1);
    private final AtomicLong sequence = new AtomicLong();
    private final List<RecordedRequest> requests = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private long resourceVersion = 1000;
    private long compactedBelow;
    private long continueEpoch;
    private long nextSnapshotId;
    private final Map<String, TreeMap<String, Stored>> resources = new HashMap<>();
    private final List<Event> events = new ArrayList<>();
    private final Map<Long, ListSnapshot> snapshots = new HashMap<>();
    private final List<OpenWatch> watches = new ArrayList<>();
    private final Map<RequestKind, Queue<Fault>> faults = new EnumMap<>(RequestKind.class);

    private record Stored(long resourceVersion, String json) {
    }

    private record Event(long resourceVersion, String namespace, String line) {
    }

    private record ListSnapshot(long epoch, long resourceVersion, List<String> items) {
    }

    /** Commands to an open watch. */
    private sealed interface WatchCommand {
        record Line(String json) implements WatchCommand {
        }

        record End() implements WatchCommand {
        }

        record Drop() implements WatchCommand {
        }
    }

    private record OpenWatch(long sequence, String namespace, boolean bookmarks, LinkedBlockingQueue<WatchCommand> queue) {
    }

    private FakeKubeApi(Builder builder) throws IOException {
        this.requestListener = builder.requestListener;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        this.kubeconfig = writeKubeconfig();
        this.acceptor = Thread.ofVirtual().name("fake-kube-accept").start(this::acceptLoop);
    }

    /**
     * A builder.
     *
     * @return builder
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
         *
         * @param listener listener
         * @return this
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
        return "http://" + server.getInetAddress().getHostAddress() + ":" + server.getLocalPort();
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
     * @param namespace Kubernetes namespace
     * @param json      raw JSON, served as is
     * @return the name it is stored under
     */
    public String put(String namespace, String json) {
        String name = nameOf(json);
        if (name == null) {
            lock.lock();
            try {
                name = "unnamed-" + (resourceVersion + 1);
            } finally {
                lock.unlock();
            }
        }
        put(namespace, name, json);
        return name;
    }

    /**
     * Creates or replaces a resource under an explicit name.
     *
     * @param namespace Kubernetes namespace
     * @param name      name to store it under
     * @param json      raw JSON, served as is
     */
    public void put(String namespace, String name, String json) {
        lock.lock();
        try {
            long rv = ++resourceVersion;
            String served = withResourceVersion(json, rv);
            Stored previous = resources.computeIfAbsent(namespace, n -> new TreeMap<>()).put(name, new Stored(rv, served));
            emit(namespace, rv, previous == null ? "ADDED" : "MODIFIED", served);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Deletes a resource; open watches get DELETED.
     *
     * @param namespace Kubernetes namespace
     * @param name      name
     * @return whether it existed
     */
    public boolean delete(String namespace, String name) {
        lock.lock();
        try {
            TreeMap<String, Stored> ns = resources.get(namespace);
            Stored previous = ns == null ? null : ns.remove(name);
            if (previous == null) {
                return false;
            }
            long rv = ++resourceVersion;
            emit(namespace, rv, "DELETED", withResourceVersion(previous.json(), rv));
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends a BOOKMARK with the current resourceVersion to the namespace's open watches that asked for
     * bookmarks.
     *
     * @param namespace Kubernetes namespace
     */
    public void bookmark(String namespace) {
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

    /**
     * Sends an ERROR event with a Status of this code to the namespace's open watches, then ends them.
     *
     * @param namespace Kubernetes namespace
     * @param code      status code (410 means "relist")
     */
    public void sendWatchError(String namespace, int code) {
        lock.lock();
        try {
            for (OpenWatch w : List.copyOf(watches)) {
                if (w.namespace().equals(namespace)) {
                    w.queue().add(new WatchCommand.Line("{\"type\":\"ERROR\",\"object\":" + status(code) + "}"));
                    w.queue().add(new WatchCommand.End());
                    watches.remove(w); // no longer counted as open: awaitOpenWatches waits for the next one
                }
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes a raw line (anything, even invalid JSON) to the namespace's open watches.
     *
     * @param namespace Kubernetes namespace
     * @param line      raw text, sent as one chunk followed by a newline
     */
    public void sendWatchLine(String namespace, String line) {
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

    /** Resets the connections of every request held by a {@link Fault.Hang}. */
    public void releaseHangs() {
        for (Socket s : hung) {
            reset(s);
        }
    }

    /** Ends every open watch cleanly (the server ended the watch). */
    public void endWatches() {
        commandAll(new WatchCommand.End());
    }

    /** Resets the connection of every open watch in the middle of a chunk. */
    public void dropWatches() {
        commandAll(new WatchCommand.Drop());
    }

    /** Makes every outstanding continue token answer {@code 410 Gone}. */
    public void expireContinueTokens() {
        lock.lock();
        try {
            continueEpoch++;
            snapshots.clear();
        } finally {
            lock.unlock();
        }
    }

    /** Forgets the event history: a watch from any older resourceVersion gets ERROR 410. */
    public void compact() {
        lock.lock();
        try {
            compactedBelow = resourceVersion;
            events.clear();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Applies a fault to the next request of this kind (faults queue up, one per request).
     *
     * @param kind  LIST or WATCH
     * @param fault fault
     */
    public void inject(RequestKind kind, Fault fault) {
        lock.lock();
        try {
            faults.computeIfAbsent(kind, k -> new ArrayDeque<>()).add(fault);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The current resourceVersion.
     *
     * @return resourceVersion
     */
    public long resourceVersion() {
        lock.lock();
        try {
            return resourceVersion;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Every request received so far, in arrival order.
     *
     * @return requests
     */
    public List<RecordedRequest> requests() {
        return List.copyOf(requests);
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
        return awaitUnder(() -> requests.stream().filter(test).findFirst().orElse(null), timeout,
                () -> "no matching request within " + timeout + "; got " + requests);
    }

    /**
     * Waits until at least {@code count} watches of the namespace are open (replay written).
     *
     * @param namespace Kubernetes namespace
     * @param count     how many
     * @param timeout   bound
     * @throws AssertionError when they did not open in time
     */
    public void awaitOpenWatches(String namespace, int count, Duration timeout) {
        awaitUnder(() -> watches.stream().filter(w -> w.namespace().equals(namespace)).count() >= count ? Boolean.TRUE
                : null, timeout, () -> count + " watches of " + namespace + " not open within " + timeout);
    }

    /**
     * Waits until a watch of the namespace opened by a request later than {@code afterSequence} is open
     * (a client that gave up on an older watch may not have been noticed yet; this ignores it).
     *
     * @param namespace     Kubernetes namespace
     * @param afterSequence request sequence the watch must come after (0 for any)
     * @param timeout       bound
     * @return the request sequence of the open watch
     * @throws AssertionError when none opened in time
     */
    public long awaitNewWatch(String namespace, long afterSequence, Duration timeout) {
        return awaitUnder(() -> watches.stream()
                        .filter(w -> w.namespace().equals(namespace) && w.sequence() > afterSequence)
                        .map(OpenWatch::sequence).findFirst().orElse(null), timeout,
                () -> "no new watch of " + namespace + " within " + timeout);
    }

    /**
     * Waits, under the server's lock, until {@code found} returns non-null; re-checked on every change.
     */
    private <T> T awaitUnder(java.util.function.Supplier<T> found, Duration timeout,
                             java.util.function.Supplier<String> failure) {
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

    @Override
    public void close() {
        if (closed.getCount() == 0) {
            return;
        }
        closed.countDown();
        commandAll(new WatchCommand.Drop());
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        try {
            acceptor.join(Duration.ofSeconds(5));
            Files.deleteIfExists(kubeconfig);
            Files.deleteIfExists(kubeconfig.getParent());
        } catch (IOException | InterruptedException ignored) {
            // best effort
        }
    }

    // ---------------------------------------------------------------- serving

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                sockets.add(s);
                Thread.ofVirtual().name("fake-kube-conn").start(() -> serve(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket socket) {
        try (socket) {
            socket.setTcpNoDelay(true);
            InputStream in = new BufferedInputStream(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            while (true) {
                String requestLine = readLine(in);
                if (requestLine == null || requestLine.isEmpty()) {
                    return;
                }
                long contentLength = 0;
                for (String h = readLine(in); h != null && !h.isEmpty(); h = readLine(in)) {
                    int colon = h.indexOf(':');
                    if (colon > 0 && h.substring(0, colon).trim().equalsIgnoreCase("content-length")) {
                        contentLength = Long.parseLong(h.substring(colon + 1).trim());
                    }
                }
                in.skipNBytes(contentLength);
                if (!handle(requestLine, socket, out)) {
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            // client went away or the server is closing
        } finally {
            sockets.remove(socket);
        }
    }

    /** Answers one request; returns whether the connection may carry another. */
    private boolean handle(String requestLine, Socket socket, OutputStream out) throws IOException {
        String[] parts = requestLine.split(" ");
        String method = parts[0];
        String target = parts.length > 1 ? parts[1] : "/";
        int q = target.indexOf('?');
        String path = q < 0 ? target : target.substring(0, q);
        Map<String, String> query = new LinkedHashMap<>();
        if (q >= 0) {
            for (String pair : target.substring(q + 1).split("&")) {
                int eq = pair.indexOf('=');
                String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                query.put(k, v);
            }
        }
        Matcher m = PATH.matcher(path);
        String namespace = m.matches() ? m.group(1) : null;
        RequestKind kind = namespace == null || !method.equals("GET") ? RequestKind.OTHER
                : "true".equals(query.get("watch")) ? RequestKind.WATCH : RequestKind.LIST;
        RecordedRequest recorded = new RecordedRequest(sequence.incrementAndGet(), method, path, query, kind, namespace);
        requestListener.accept(recorded);
        Fault fault;
        lock.lock();
        try {
            requests.add(recorded);
            changed.signalAll();
            Queue<Fault> queue = faults.get(kind);
            fault = queue == null ? null : queue.poll();
            if (fault instanceof Fault.Hang) {
                hung.add(socket); // before the request is visible to awaitRequest: releaseHangs() finds it
            }
        } finally {
            lock.unlock();
        }
        switch (fault) {
            case Fault.Status s -> {
                respond(out, s.code(), status(s.code()));
                return true;
            }
            case Fault.Hang h -> {
                try {
                    awaitClientGoneOrClose(socket);
                } finally {
                    hung.remove(socket);
                }
                return false;
            }
            case null -> {
            }
            case Fault.StallMidBody stall -> {
                // handled by list(); a WATCH with this fault is served normally
            }
            case Fault.DropMidBody d -> {
                byte[] body = ("{\"kind\":\"DynamoWorkerMetadataList\",\"metadata\":{\"resourceVersion\":\""
                        + resourceVersion() + "\"},\"items\":[{\"metadata\":{\"name\":\"half").getBytes(StandardCharsets.UTF_8);
                out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                        + (body.length * 4) + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                out.write(body);
                out.flush();
                reset(socket);
                return false;
            }
        }
        return switch (kind) {
            case LIST -> list(namespace, query, out, fault instanceof Fault.StallMidBody st ? st : null);
            case WATCH -> watch(recorded.sequence(), namespace, query, socket, out);
            case OTHER -> {
                respond(out, 404, status(404));
                yield true;
            }
        };
    }

    private boolean list(String namespace, Map<String, String> query, OutputStream out, Fault.StallMidBody stall)
            throws IOException {
        int limit = query.containsKey("limit") ? Integer.parseInt(query.get("limit")) : Integer.MAX_VALUE;
        if (limit <= 0) {
            limit = Integer.MAX_VALUE;
        }
        String token = query.get("continue");
        ListSnapshot snapshot;
        long id;
        int offset;
        lock.lock();
        try {
            if (token == null || token.isEmpty()) {
                List<String> items = new ArrayList<>();
                resources.getOrDefault(namespace, new TreeMap<>()).values().forEach(s -> items.add(s.json()));
                snapshot = new ListSnapshot(continueEpoch, resourceVersion, items);
                id = ++nextSnapshotId;
                snapshots.put(id, snapshot);
                offset = 0;
            } else {
                String[] t = token.split("-");
                id = t.length == 3 ? parseLong(t[1]) : -1;
                offset = t.length == 3 ? (int) parseLong(t[2]) : -1;
                snapshot = snapshots.get(id);
            }
        } finally {
            lock.unlock();
        }
        if (snapshot == null || offset < 0) {
            respond(out, 410, status(410));
            return true;
        }
        int end = (int) Math.min(snapshot.items().size(), (long) offset + limit);
        StringBuilder body = new StringBuilder(1024);
        int stallAt = -1;
        body.append("{\"apiVersion\":\"nvidia.com/v1alpha1\",\"kind\":\"DynamoWorkerMetadataList\",\"metadata\":{");
        if (end < snapshot.items().size()) {
            body.append("\"continue\":\"c-").append(id).append('-').append(end).append("\",")
                    .append("\"remainingItemCount\":").append(snapshot.items().size() - end).append(',');
        }
        body.append("\"resourceVersion\":\"").append(snapshot.resourceVersion()).append("\"},\"items\":[");
        for (int i = offset; i < end; i++) {
            if (stall != null && i - offset == stall.afterItems()) {
                stallAt = body.length();
            }
            if (i > offset) {
                body.append(',');
            }
            body.append(snapshot.items().get(i));
        }
        body.append("]}");
        if (stallAt < 0) {
            respond(out, 200, body.toString());
            return true;
        }
        byte[] first = body.substring(0, stallAt).getBytes(StandardCharsets.UTF_8);
        byte[] rest = body.substring(stallAt).getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + (first.length + rest.length) + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.write(first);
        out.flush();
        try {
            while (!stall.resume().await(100, TimeUnit.MILLISECONDS)) {
                if (closed.getCount() == 0) {
                    return false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        out.write(rest);
        out.flush();
        return true;
    }

    private boolean watch(long requestSequence, String namespace, Map<String, String> query, Socket socket,
                          OutputStream out)
            throws IOException {
        long from = query.containsKey("resourceVersion") && !query.get("resourceVersion").isEmpty()
                ? parseLong(query.get("resourceVersion")) : -1;
        long timeoutSeconds = query.containsKey("timeoutSeconds") ? parseLong(query.get("timeoutSeconds")) : 1800;
        boolean bookmarks = "true".equals(query.get("allowWatchBookmarks"));
        OpenWatch watch = new OpenWatch(requestSequence, namespace, bookmarks, new LinkedBlockingQueue<>());
        List<String> backlog = new ArrayList<>();
        lock.lock();
        try {
            if (from >= 0 && from < compactedBelow) {
                backlog.add("{\"type\":\"ERROR\",\"object\":" + status(410) + "}");
                watch.queue().add(new WatchCommand.End());
            } else {
                for (Event e : events) {
                    if (e.namespace().equals(namespace) && e.resourceVersion() > from) {
                        backlog.add(e.line());
                    }
                }
            }
            // Registered with the backlog taken under the same lock: no event falls in between.
            watches.add(watch);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                + "Connection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        for (String line : backlog) {
            chunk(out, line);
        }
        out.flush();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Math.max(1, timeoutSeconds));
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                WatchCommand command = left <= 0 ? new WatchCommand.End()
                        : watch.queue().poll(left, TimeUnit.NANOSECONDS);
                if (command == null) {
                    continue;
                }
                switch (command) {
                    case WatchCommand.Line line -> {
                        chunk(out, line.json());
                        out.flush();
                    }
                    case WatchCommand.End end -> {
                        out.write("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                        out.flush();
                        return false;
                    }
                    case WatchCommand.Drop drop -> {
                        out.write("200\r\n{\"type\":\"MODI".getBytes(StandardCharsets.ISO_8859_1));
                        out.flush();
                        reset(socket);
                        return false;
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.lock();
            try {
                watches.remove(watch);
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    private void emit(String namespace, long rv, String type, String json) {
        String line = "{\"type\":\"" + type + "\",\"object\":" + json + "}";
        events.add(new Event(rv, namespace, line));
        for (OpenWatch w : watches) {
            if (w.namespace().equals(namespace)) {
                w.queue().add(new WatchCommand.Line(line));
            }
        }
    }

    /** Ends every open watch; they stop counting as open at once. */
    private void commandAll(WatchCommand command) {
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

    /** Blocks until the client gives up (EOF or reset) or the server closes the socket. */
    private static void awaitClientGoneOrClose(Socket socket) {
        try {
            InputStream raw = socket.getInputStream();
            while (raw.read() >= 0) {
                // discard
            }
        } catch (IOException ignored) {
            // gone
        }
    }

    private static void chunk(OutputStream out, String line) throws IOException {
        byte[] data = (line + "\n").getBytes(StandardCharsets.UTF_8);
        out.write((Integer.toHexString(data.length) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.write(data);
        out.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
    }

    private static void respond(OutputStream out, int code, String body) throws IOException {
        byte[] data = body.getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 " + code + " " + reason(code) + "\r\nContent-Type: application/json\r\nContent-Length: "
                + data.length + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.write(data);
        out.flush();
    }

    private static String reason(int code) {
        return switch (code) {
            case 200 -> "OK";
            case 404 -> "Not Found";
            case 410 -> "Gone";
            case 500 -> "Internal Server Error";
            case 503 -> "Service Unavailable";
            default -> "Status";
        };
    }

    /** A Kubernetes Status body. */
    static String status(int code) {
        String reason = code == 410 ? "Expired" : code == 404 ? "NotFound" : "InternalError";
        return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\""
                + (code == 410 ? "too old resource version or expired continue token" : "injected failure")
                + "\",\"reason\":\"" + reason + "\",\"code\":" + code + "}";
    }

    private static void reset(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
        } catch (SocketException ignored) {
            // closing anyway
        }
        closeQuietly(socket);
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    private static long parseLong(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream(128);
        int b;
        while ((b = in.read()) >= 0) {
            if (b == '\n') {
                break;
            }
            if (b != '\r') {
                line.write(b);
            }
            if (line.size() > 64 * 1024) {
                throw new IOException("request line too long");
            }
        }
        if (b < 0 && line.size() == 0) {
            return null;
        }
        return line.toString(StandardCharsets.ISO_8859_1);
    }

    private static String withResourceVersion(String json, long rv) {
        Matcher m = METADATA_OPEN.matcher(json);
        if (!m.find()) {
            return json;
        }
        int at = m.end();
        int next = at;
        while (next < json.length() && Character.isWhitespace(json.charAt(next))) {
            next++;
        }
        boolean empty = next < json.length() && json.charAt(next) == '}';
        return json.substring(0, at) + "\"resourceVersion\":\"" + rv + "\"" + (empty ? "" : ",") + json.substring(at);
    }

    /** {@code metadata.name} of a well-formed resource, else null. */
    private static String nameOf(String json) {
        try (JsonParser p = JSON.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                if ("metadata".equals(field) && t == JsonToken.START_OBJECT) {
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String f = p.currentName();
                        JsonToken v = p.nextToken();
                        if ("name".equals(f) && v == JsonToken.VALUE_STRING) {
                            return p.getText();
                        }
                        p.skipChildren();
                    }
                    return null;
                }
                p.skipChildren();
            }
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    private Path writeKubeconfig() throws IOException {
        Path dir = Files.createTempDirectory("fake-kube");
        Path file = dir.resolve("kubeconfig");
        Files.writeString(file, """
                apiVersion: v1
                kind: Config
                clusters:
                - name: fake
                  cluster:
                    server: %s
                contexts:
                - name: fake
                  context:
                    cluster: fake
                    user: fake
                    namespace: default
                current-context: fake
                users:
                - name: fake
                  user:
                    token: fake-token
                """.formatted(url()));
        return file;
    }
}
