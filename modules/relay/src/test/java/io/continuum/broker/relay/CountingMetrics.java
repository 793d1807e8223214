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

    public boolean connected() {
        return connected;
    }

    private void add(String series, long n) {
        counts.computeIfAbsent(series, k -> new AtomicLong()).addAndGet(n);
    }

    @Override
    public void sessionAttempt(AttemptResult result) {
        add("session_attempts_total{result=" + result.label() + "}", 1);
    }

    @Override
    public void sessionEnded(EndReason reason) {
        add("session_ends_total{reason=" + reason.wire() + "}", 1);
    }

    @Override
    public void sessionConnected(boolean value) {
        connected = value;
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

    @Override
    public void streamClosed(Code code) {
        add("stream_closes_total{code=" + code.wire() + "}", 1);
    }

    @Override
    public void streamNearBudget() {
        add("stream_buffer_near_budget_total", 1);
    }

    @Override
    public void overflowClose() {
        add("overflow_closes_total", 1);
    }

    @Override
    public void ignoredFrame(String type) {
        add("ignored_frames_total{type=" + type + "}", 1);
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
    public void publisherDialed(DialResult dial, Duration elapsed) {
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
