package io.continuum.broker.testing.router;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * One request stream accepted by the {@link TestRouter}, handed to the test as a duplex handle: read the request
 * body, send the response head and body, end it or reset it. The Helidon handler thread of the stream waits
 * until the test ends, resets or answers it. Any thread may drive it.
 */
public final class RouterStream {
    /** How the handler finishes. */
    sealed interface Outcome {
        record Ended() implements Outcome {
        }

        record Reset(int errorCode) implements Outcome {
        }
    }

    private final String method;
    private final String path;
    private final Map<String, List<String>> headers;
    private final ServerRequest request;
    private final ServerResponse response;
    private final CompletableFuture<Outcome> outcome = new CompletableFuture<>();
    private OutputStream out;

    RouterStream(ServerRequest request, ServerResponse response, Map<String, List<String>> headers) {
        this.request = request;
        this.response = response;
        this.method = request.prologue().method().text();
        this.path = request.path().path();
        this.headers = headers;
    }

    /** @return request method */
    public String method() {
        return method;
    }

    /** @return request path, e.g. {@code /bus/v1/streams/17} */
    public String path() {
        return path;
    }

    /** @return every request header, names lower case, as received */
    public Map<String, List<String>> headers() {
        return headers;
    }

    /**
     * @param name header name (any case)
     * @return first value
     */
    public Optional<String> header(String name) {
        List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
        return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.getFirst());
    }

    /** @return the request body; not reading it withholds flow-control window from the client */
    public InputStream requestBody() {
        return request.content().inputStream();
    }

    /**
     * Sends the response status and headers now (HEADERS without END_STREAM).
     */
    public synchronized void sendHead(int status) {
        sendHead(status, Map.of());
    }

    /**
     * Sends the response status and these headers now (HEADERS without END_STREAM), e.g.
     * {@code content-type: application/x-continuum-bus} on a session stream.
     */
    public synchronized void sendHead(int status, Map<String, String> headers) {
        headers.forEach((name, value) -> response.header(name, value));
        response.status(Status.create(status));
        out = response.outputStream();
        HelidonServerStreams.flushHeaders(response);
    }

    /**
     * Writes response body bytes (sends a 200 head first if none was sent). Blocks while the client's window is
     * exhausted.
     *
     * @param bytes bytes to send
     */
    public void write(byte[] bytes) {
        OutputStream stream;
        synchronized (this) {
            if (out == null) {
                sendHead(200);
            }
            stream = out;
        }
        try {
            stream.write(bytes);
            stream.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Ends the response body (END_STREAM) and finishes the handler. */
    public void end() {
        synchronized (this) {
            if (out == null) {
                sendHead(200);
            }
            try {
                out.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        outcome.complete(new Outcome.Ended());
    }

    /**
     * Answers with a complete response and no streaming, e.g. {@code 404 unknown_stream}.
     */
    public void respond(int status, String body) {
        response.status(Status.create(status)).send(body);
        outcome.complete(new Outcome.Ended());
    }

    /**
     * Resets the stream (RST_STREAM with this error code).
     *
     * @param errorCode HTTP/2 error code, e.g. 0x8 CANCEL
     */
    public void reset(int errorCode) {
        HelidonServerStreams.reset(response, errorCode);
        outcome.complete(new Outcome.Reset(errorCode));
    }

    Outcome awaitOutcome() throws InterruptedException {
        try {
            return outcome.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    void abandon() {
        outcome.complete(new Outcome.Reset(0x2));
    }

    @Override
    public String toString() {
        return method + " " + path;
    }
}
