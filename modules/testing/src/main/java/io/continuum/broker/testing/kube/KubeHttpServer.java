package io.continuum.broker.testing.kube;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Plain HTTP/1.1 on 127.0.0.1 in front of a {@link ResourceStore}: just enough of the API server's
 * list and watch endpoints for client-java, one virtual thread per connection, and the faults a test
 * queued carried out on the wire (status, hang, mid-body drop, mid-page stall).
 */
final class KubeHttpServer implements Closeable {
    private static final Pattern PATH = Pattern.compile(
            "/apis/nvidia\\.com/v1alpha1/namespaces/([^/]+)/dynamoworkermetadatas");

    private final ResourceStore store;
    private final Consumer<RecordedRequest> requestListener;
    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Set<Socket> hung = ConcurrentHashMap.newKeySet();
    private final CountDownLatch closed = new CountDownLatch(1);
    private final AtomicLong sequence = new AtomicLong();
    private final Thread acceptor;

    KubeHttpServer(ResourceStore store, Consumer<RecordedRequest> requestListener) throws IOException {
        this.store = store;
        this.requestListener = requestListener;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        this.acceptor = Thread.ofVirtual().name("fake-kube-accept").start(this::acceptLoop);
    }

    String url() {
        return "http://" + server.getInetAddress().getHostAddress() + ":" + server.getLocalPort();
    }

    /** Resets the connections of every request held by a {@link Fault.Hang}. */
    void releaseHangs() {
        for (Socket s : hung) {
            reset(s);
        }
    }

    @Override
    public void close() {
        if (closed.getCount() == 0) {
            return;
        }
        closed.countDown();
        store.commandAll(new ResourceStore.WatchCommand.Drop());
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
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

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
        // A hung request is registered before it is visible to awaitRequest: releaseHangs() finds it.
        Fault fault = store.arrived(recorded, f -> {
            if (f instanceof Fault.Hang) {
                hung.add(socket);
            }
        });
        switch (fault) {
            case Fault.Status s -> {
                respond(out, s.code(), KubeJson.status(s.code()));
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
                        + store.resourceVersion() + "\"},\"items\":[{\"metadata\":{\"name\":\"half")
                        .getBytes(StandardCharsets.UTF_8);
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
                respond(out, 404, KubeJson.status(404));
                yield true;
            }
        };
    }

    /** One page of a list; continue tokens are {@code c-<snapshot>-<offset>} into a fixed snapshot. */
    private boolean list(String namespace, Map<String, String> query, OutputStream out, Fault.StallMidBody stall)
            throws IOException {
        int limit = query.containsKey("limit") ? Integer.parseInt(query.get("limit")) : Integer.MAX_VALUE;
        if (limit <= 0) {
            limit = Integer.MAX_VALUE;
        }
        String token = query.get("continue");
        ResourceStore.ListSnapshot snapshot;
        int offset;
        if (token == null || token.isEmpty()) {
            snapshot = store.snapshot(namespace);
            offset = 0;
        } else {
            String[] t = token.split("-");
            snapshot = t.length == 3 ? store.continued(parseLong(t[1])) : null;
            offset = t.length == 3 ? (int) parseLong(t[2]) : -1;
        }
        if (snapshot == null || offset < 0) {
            respond(out, 410, KubeJson.status(410));
            return true;
        }
        int end = (int) Math.min(snapshot.items().size(), (long) offset + limit);
        StringBuilder body = new StringBuilder(1024);
        int stallAt = -1;
        body.append("{\"apiVersion\":\"nvidia.com/v1alpha1\",\"kind\":\"DynamoWorkerMetadataList\",\"metadata\":{");
        if (end < snapshot.items().size()) {
            body.append("\"continue\":\"c-").append(snapshot.id()).append('-').append(end).append("\",")
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

    /** A chunked watch: the backlog, then whatever the store sends it, until it ends or times out. */
    private boolean watch(long requestSequence, String namespace, Map<String, String> query, Socket socket,
                          OutputStream out) throws IOException {
        long from = query.containsKey("resourceVersion") && !query.get("resourceVersion").isEmpty()
                ? parseLong(query.get("resourceVersion")) : -1;
        long timeoutSeconds = query.containsKey("timeoutSeconds") ? parseLong(query.get("timeoutSeconds")) : 1800;
        boolean bookmarks = "true".equals(query.get("allowWatchBookmarks"));
        ResourceStore.WatchStart start = store.openWatch(requestSequence, namespace, from, bookmarks);
        ResourceStore.OpenWatch watch = start.watch();
        try {
            out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                    + "Connection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            for (String line : start.backlog()) {
                chunk(out, line);
            }
            out.flush();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Math.max(1, timeoutSeconds));
            while (true) {
                long left = deadline - System.nanoTime();
                ResourceStore.WatchCommand command = left <= 0 ? new ResourceStore.WatchCommand.End()
                        : watch.queue().poll(left, TimeUnit.NANOSECONDS);
                if (command == null) {
                    continue;
                }
                switch (command) {
                    case ResourceStore.WatchCommand.Line line -> {
                        chunk(out, line.json());
                        out.flush();
                    }
                    case ResourceStore.WatchCommand.End end -> {
                        out.write("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                        out.flush();
                        return false;
                    }
                    case ResourceStore.WatchCommand.Drop drop -> {
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
            store.closeWatch(watch);
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
}
