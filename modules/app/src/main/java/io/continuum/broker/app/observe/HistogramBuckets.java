package io.continuum.broker.app.observe;

import java.time.Duration;

/** The upper bounds of the broker's histograms, in seconds, fitted to what each one measures (+Inf is added). */
final class HistogramBuckets {
    /*
     * Subscribe to stream_opened: checks, DNS (deadline 5 s), connect (10 s) and an HTTP/2 stream slot
     * (5 s); in a cluster normally a few milliseconds.
     */
    static final Duration[] SUBSCRIBE_OPEN_BUCKETS = seconds(
            0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30);
    /** Publisher dial: checks, DNS and TCP connect to a Pod on the cluster network, bounded by the 10 s budget. */
    static final Duration[] PUBLISHER_DIAL_BUCKETS = seconds(
            0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10);
    /** Bus connect to welcome: TCP, TLS and HTTP/2 set-up plus hello/welcome across a WAN; bounded by bus_connect_timeout. */
    static final Duration[] BUS_CONNECT_BUCKETS = seconds(
            0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60);
    /** Metadata list: every page of a namespace (32 resources each) from the API server, up to 16,384 resources. */
    static final Duration[] METADATA_LIST_BUCKETS = seconds(
            0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120);

    private HistogramBuckets() {
    }

    private static Duration[] seconds(double... upperBounds) {
        Duration[] d = new Duration[upperBounds.length];
        for (int i = 0; i < upperBounds.length; i++) {
            d[i] = Duration.ofNanos(Math.round(upperBounds[i] * 1e9));
        }
        return d;
    }
}
