package io.continuum.broker.metadata.watch;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.core.JsonProcessingException;

import io.continuum.broker.metadata.RestartReason;
import io.continuum.broker.metadata.internal.MetadataParser;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * How the view asks the API server: the list and watch calls for {@code DynamoWorkerMetadata} in a
 * namespace, each response opened within the opening deadline (R-META 5), and every way a call can fail
 * turned into a {@link Restart} with its reason. Knows nothing of what the answers mean; shared by all
 * namespaces (it holds no per-call state).
 */
final class ApiRequests {
    private final CustomObjectsApi customObjects;
    private final OkHttpClient listHttp;
    private final OkHttpClient watchHttp;
    private final Duration openTimeout;
    private final Duration watchTimeout;

    ApiRequests(ApiClient apiClient, Duration openTimeout, Duration watchTimeout) {
        this.customObjects = new CustomObjectsApi(apiClient);
        OkHttpClient base = apiClient.getHttpClient();
        this.listHttp = base.newBuilder()
                .readTimeout(Duration.ofSeconds(60))
                .build();
        // A watch is silent between events for up to the whole timeout asked of the server.
        this.watchHttp = base.newBuilder()
                .readTimeout(watchTimeout.plus(Duration.ofSeconds(30)))
                .build();
        this.openTimeout = openTimeout;
        this.watchTimeout = watchTimeout;
    }

    /** One page of a namespace's list: {@value MetadataWatcher#PAGE_SIZE} resources from {@code token} on. */
    Call listPage(String namespace, String token) throws Restart {
        return listHttp.newCall(request(namespace, false, null, token));
    }

    /** A watch of a namespace from {@code resourceVersion}, with bookmarks, ended by the server at its timeout. */
    Call watch(String namespace, String resourceVersion) throws Restart {
        return watchHttp.newCall(request(namespace, true, resourceVersion, null));
    }

    private Request request(String namespace, boolean watch, String resourceVersion, String token)
            throws Restart {
        try {
            CustomObjectsApi.APIlistNamespacedCustomObjectRequest r = customObjects.listNamespacedCustomObject(
                    MetadataWatcher.GROUP, MetadataWatcher.VERSION, namespace, MetadataWatcher.PLURAL);
            if (watch) {
                r = r.watch(true).allowWatchBookmarks(true).resourceVersion(resourceVersion)
                        .timeoutSeconds((int) Math.max(1, watchTimeout.toSeconds()));
            } else {
                r = r.limit(MetadataWatcher.PAGE_SIZE)._continue(token);
            }
            return r.buildCall(null).request();
        } catch (ApiException | RuntimeException e) {
            throw new Restart(RestartReason.ERROR, "cannot build request: " + e.getClass().getSimpleName());
        }
    }

    /**
     * Executes a call whose response head must arrive within the opening deadline; a 410 is
     * {@code expired}, any other non-200 status {@code error}. OkHttp's read timeouts are longer (a watch
     * may be silent for minutes) and bound each read rather than the whole wait for the head, so a timer
     * thread cancels the call when the deadline passes first.
     */
    Response open(Call call) throws Restart, IOException {
        // 0 = waiting, 1 = opened, 2 = timed out
        AtomicInteger state = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(1);
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

    static ResponseBody body(Response response) throws Restart {
        ResponseBody body = response.body();
        if (body == null) {
            throw new Restart(RestartReason.ERROR, "response without body");
        }
        return body;
    }

    /** Why reading a response failed; an interruption while the view closes is the close, not an outage. */
    static Restart classify(IOException e, boolean closing) {
        if (e instanceof JsonProcessingException || e instanceof MetadataParser.MalformedException) {
            return new Restart(RestartReason.ERROR, "malformed response: " + e.getClass().getSimpleName());
        }
        if (e instanceof InterruptedIOException && closing) {
            return new Restart(RestartReason.DISCONNECTED, "closing");
        }
        return new Restart(RestartReason.DISCONNECTED, e.getClass().getSimpleName() + ": " + e.getMessage());
    }
}
