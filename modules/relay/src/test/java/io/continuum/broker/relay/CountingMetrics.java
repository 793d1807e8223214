package io.continuum.broker.relay;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.relay.api.RelayMetrics;

/**
 * Records what the relay reports, keyed like the R-MET series ({@code refusals_total{code=...}}).
 */
public final class CountingMetrics implements RelayMetrics {
    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
    private volatile boolean connected;
    private volatile Runnable onSubscribeOpened = () -> { };

    /** @param hook runs on the opener's thread at each count of an opened subscribe, before stream_opened is sent */
    public void onSubscribeOpened(Runnable hook) {
        onSubscribeOpened = hook;
    }

    public long get(String series) {
        AtomicLong v = counts.get(series);
        return v == null ? 0 : v.get();
    }

    /**
     * @return whether a session is welcomed now: from its {@code welcomed} attempt to its end, as the broker's own
     *         {@code EventBroker.connected()}, which the app's {@code session_connected} gauge reads
     */
    public boolean connected() {
        return connected;
    }

    private void add(String series, long n) {
        counts.computeIfAbsent(series, k -> new AtomicLong()).addAndGet(n);
    }

    @Override
    public void sessionAttempt(AttemptResult result) {
        add("session_attempts_total{result=" + result.label() + "}", 1);
        if (result == AttemptResult.WELCOMED) {
            connected = true;
        }
    }

    @Override
    public void sessionEnded(EndReason reason) {
        connected = false;
        add("session_ends_total{reason=" + reason.wire() + "}", 1);
    }


    @Override
    public void reconnect() {
        add("reconnects_total", 1);
    }

    @Override
    public void subscribeOpened() {
        add("subscribes_total{result=opened}", 1);
        onSubscribeOpened.run();
    }

    @Override
    public void subscribeRefused(Code code) {
        add("subscribes_total{result=refused}", 1);
    }

    @Override
    public void refusalSent(Code code) {
        add("refusals_total{code=" + code.wire() + "}", 1);
    }

    /** As the app's metrics: a {@code buffer_overflow} close also counts {@code overflow_closes_total}. */
    @Override
    public void streamClosed(Code code) {
        add("stream_closes_total{code=" + code.wire() + "}", 1);
        if (code == Code.BUFFER_OVERFLOW) {
            add("overflow_closes_total", 1);
        }
    }

    @Override
    public void streamNearBudget() {
        add("stream_buffer_near_budget_total", 1);
    }

    @Override
    public void unknownFrame() {
        add("unknown_frames_total", 1);
    }

    @Override
    public void subscribeOpened(Duration sinceSubscribe) {
        add("subscribe_open_duration_seconds_count", 1);
        add("subscribe_open_duration_nanos_sum", sinceSubscribe.toNanos());
        subscribeOpened();
    }

    @Override
    public void busConnected(Duration sinceAttemptStart) {
        add("bus_connect_duration_seconds_count", 1);
        add("bus_connect_duration_nanos_sum", sinceAttemptStart.toNanos());
    }

    @Override
    public void publisherDialed(DialOutcome dial, Duration elapsed) {
        String result = dial.label();
        add("publisher_dial_duration_seconds_count{result=" + result + "}", 1);
        add("publisher_dial_duration_nanos_sum{result=" + result + "}", elapsed.toNanos());
    }

    @Override
    public void routerError(Code code, boolean terminal) {
        add("router_errors_total{code=" + code.wire() + "}", 1);
        add("router_errors_total{code=" + code.wire() + ",terminal=" + terminal + "}", 1);
    }

    @Override
    public void relayed(Direction direction, long bytes) {
        add("relayed_bytes_total{direction=" + direction.label() + "}", bytes);
    }
}
