package io.continuum.broker.training;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Kubernetes API as the broker's metadata view uses it, on plain HTTP/1.1 on loopback: a list of the training
 * publishers' {@code DynamoWorkerMetadata} (one resource each, the flat channel shape of
 * dynamo-worker-metadata.md), and a watch that carries no event until it times out or the server closes.
 * Anything else is 404.
 */
final class TrainingApiServer implements AutoCloseable {
    private static final Pattern RESOURCES = Pattern.compile(
            "/apis/nvidia\\.com/v1alpha1/namespaces/([^/?]+)/dynamoworkermetadatas(\\?.*)?");
    private static final int MAX_HEAD_BYTES = 16 * 1024;

    private final String namespace;
    private final String list;
    private final ServerSocket listener;
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private final CountDownLatch closed = new CountDownLatch(1);

    /**
     * @param namespace        the Kubernetes namespace the resources are in
     * @param dynamoNamespace  the Dynamo namespace their channels are in
     * @param publisherPorts   one resource per publisher, on 127.0.0.1
     */
    TrainingApiServer(String namespace, String dynamoNamespace, List<Integer> publisherPorts) throws IOException {
        this.namespace = namespace;
        StringBuilder items = new StringBuilder();
        for (int i = 0; i < publisherPorts.size(); i++) {
            items.append(i == 0 ? "" : ",").append(resource(namespace, dynamoNamespace, i, publisherPorts.get(i)));
        }
        this.list = "{\"apiVersion\":\"nvidia.com/v1alpha1\",\"kind\":\"DynamoWorkerMetadataList\","
                + "\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[" + items + "]}";
        this.listener = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("training-api-accept").start(this::acceptLoop);
    }

    /** @return the server's URL, for a kubeconfig */
    String url() {
        return "http://127.0.0.1:" + listener.getLocalPort();
    }

    private static String resource(String namespace, String dynamoNamespace, int worker, int port) {
        return "{\"apiVersion\":\"nvidia.com/v1alpha1\",\"kind\":\"DynamoWorkerMetadata\","
                + "\"metadata\":{\"name\":\"training-worker-" + worker + "\",\"namespace\":\"" + namespace + "\","
                + "\"resourceVersion\":\"1\"},\"spec\":{\"data\":{\"event_channels\":{\""
                + dynamoNamespace + "/backend/kv-events/" + Integer.toHexString(0x100 + worker) + "\":"
                + "{\"type\":\"EventChannel\",\"namespace\":\"" + dynamoNamespace + "\",\"component\":\"backend\","
                + "\"topic\":\"kv-events\",\"instance_id\":" + (0x100 + worker) + ",\"transport\":{\"kind\":\"Zmq\","
                + "\"config\":{\"endpoint\":\"tcp://127.0.0.1:" + port + "\"}}}}}}}";
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket s = listener.accept();
                connections.add(s);
                Thread.ofVirtual().name("training-api-conn").start(() -> serve(s));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            InputStream in = new BufferedInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            String head;
            while ((head = readHead(in)) != null) {
                String requestLine = head.substring(0, Math.max(0, head.indexOf("\r\n")));
                String[] parts = requestLine.split(" ");
                Matcher m = parts.length == 3 ? RESOURCES.matcher(parts[1]) : null;
                if (m == null || !parts[0].equals("GET") || !m.matches() || !m.group(1).equals(namespace)) {
                    respond(out, 404, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                            + "\"reason\":\"NotFound\",\"code\":404}");
                } else if (m.group(2) != null && m.group(2).contains("watch=true")) {
                    watch(out, timeoutSeconds(m.group(2)));
                    return; // a watch ends its connection
                } else {
                    respond(out, 200, list);
                }
            }
        } catch (IOException e) {
            // the client went away, or the server closed
        } finally {
            connections.remove(s);
        }
    }

    /** A watch with nothing to tell: its head, then its end when it times out or the server closes. */
    private void watch(OutputStream out, long timeoutSeconds) throws IOException {
        out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                + "Connection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        try {
            closed.await(timeoutSeconds, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        out.write("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    private static long timeoutSeconds(String query) {
        Matcher m = Pattern.compile("[?&]timeoutSeconds=(\\d{1,6})").matcher(query);
        return m.find() ? Math.max(1, Long.parseLong(m.group(1))) : 300;
    }

    private static void respond(OutputStream out, int status, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 " + status + (status == 200 ? " OK" : " Not Found") + "\r\nContent-Type: application/json"
                + "\r\nContent-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
    }

    /** A request's head up to its empty line (GET carries no body), or null at the connection's end. */
    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
            if (matched == 4) {
                return head.toString(StandardCharsets.ISO_8859_1);
            }
            if (head.size() > MAX_HEAD_BYTES) {
                throw new IOException("request head over " + MAX_HEAD_BYTES + " bytes");
            }
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        closed.countDown();
        listener.close();
        for (Socket s : connections) {
            s.close();
        }
    }
}
