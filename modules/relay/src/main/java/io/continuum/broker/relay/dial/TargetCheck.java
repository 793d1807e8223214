package io.continuum.broker.relay.dial;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;

import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.Host;
import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.protocol.Code;

/**
 * The target checks of one {@code subscribe}, bus-protocol-v1.md section 5 rows 4-10 (R-SEC
 * checks 1-6), in order; the first failing one decides the code:
 * <table>
 *     <caption>checks</caption>
 *     <tr><th>row</th><th>check</th><th>code</th></tr>
 *     <tr><td>4</td><td>valid {@code zmq_tcp}: namespace, host accepted by {@link Host#parse},
 *     port 1..65535 ({@code announced_source} and other kinds refused, R-BEH 10); read by {@link DialTarget#of}</td>
 *     <td>{@code unsupported_target}</td></tr>
 *     <tr><td>5</td><td>namespace in {@code dynamo_namespaces}</td><td>{@code target_not_advertised}</td></tr>
 *     <tr><td>6</td><td>metadata view synced</td><td>{@code target_not_advertised}</td></tr>
 *     <tr><td>7</td><td>{@code (namespace, host, port)} advertised</td><td>{@code target_not_advertised}</td></tr>
 *     <tr><td>8</td><td>an address within the DNS deadline (5 s)</td><td>{@code upstream_connect_failed}</td></tr>
 *     <tr><td>9</td><td>at least one address passes the address filter</td><td>{@code target_not_allowed}</td></tr>
 *     <tr><td>10</td><td>TCP connect within 10 s (each attempt within {@code upstream_connect_timeout})</td>
 *     <td>{@code upstream_connect_failed}</td></tr>
 * </table>
 * Rows 1-3 (draining, duplicate stream, too many streams) are the session's and come first; row
 * 11 (HTTP/2 stream slot) comes after, once this returned {@link DialResult.Connected}.
 * <p>
 * Blocking, on the caller's thread, which must be a virtual thread: interrupting it cancels the dial in every stage
 * (an interrupt closes a virtual thread's connecting socket; a platform thread's connect would not notice). Each
 * stage has its own deadline: DNS counts from the call, the connect budget from the end of DNS (then the session's
 * slot and response-head deadlines follow). One per broker: its {@link UpstreamDialer} holds the dial permits.
 */
public final class TargetCheck {
    private final Set<String> dynamoNamespaces;
    private final PublisherView view;
    private final TargetResolver resolver;
    private final UpstreamDialer dialer;

    /**
     * A target check. How long a dial took is the caller's to measure: {@link DialResult} says how it ended.
     *
     * @param dynamoNamespaces the configured {@code dynamo_namespaces}
     * @param view             the metadata view
     * @param resolver         name resolution with the DNS deadline
     * @param dialer           filter and dialer
     */
    public TargetCheck(Set<String> dynamoNamespaces, PublisherView view, TargetResolver resolver,
                       UpstreamDialer dialer) {
        this.dynamoNamespaces = Set.copyOf(dynamoNamespaces);
        this.view = Objects.requireNonNull(view, "view");
        this.resolver = Objects.requireNonNull(resolver, "resolver");
        this.dialer = Objects.requireNonNull(dialer, "dialer");
    }

    /**
     * Checks and dials, blocking. Every deadline counts from this call.
     *
     * @param target the subscribe's target as {@link DialTarget#of} read it
     * @return connected, refused, or {@link DialResult.Cancelled} when the thread was interrupted (the interrupt
     *         stays set)
     */
    public DialResult checkAndConnect(DialTarget target) {
        long started = System.nanoTime();
        try {
            return switch (target) {
                case DialTarget.Unsupported u -> new DialResult.Refused(Code.UNSUPPORTED_TARGET, u.reason());
                case DialTarget.Publisher p -> {
                    DialResult.Refused refusal = advertised(p);
                    yield refusal != null ? refusal : resolveAndDial(p, started);
                }
            };
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return DialResult.Cancelled.INSTANCE;
        }
    }

    /** Rows 5-7: null when the publisher is covered and advertised. */
    private DialResult.Refused advertised(DialTarget.Publisher p) {
        if (!dynamoNamespaces.contains(p.key().namespace())) {
            return new DialResult.Refused(Code.TARGET_NOT_ADVERTISED, "namespace not covered by this broker");
        }
        if (!view.isSynced()) {
            return new DialResult.Refused(Code.TARGET_NOT_ADVERTISED, "metadata not synced yet");
        }
        Advertisement advertisement = view.check(p.key());
        if (!advertisement.advertised()) {
            // the view may lose its sync between the two questions (an API outage): say which it was
            return new DialResult.Refused(Code.TARGET_NOT_ADVERTISED, advertisement == Advertisement.NOT_SYNCED
                    ? "metadata not synced yet" : "publisher not advertised");
        }
        return null;
    }

    /** Rows 8-10. */
    private DialResult resolveAndDial(DialTarget.Publisher p, long started) throws InterruptedException {
        return switch (resolver.resolve(p.host(), started + resolver.dnsTimeout().toNanos())) {
            case Resolution.Failed failed -> new DialResult.Refused(Code.UPSTREAM_CONNECT_FAILED, failed.reason());
            // The connect budget counts from the end of DNS (R-OPEN gives each stage its own deadline), so a
            // slow answer within the DNS deadline never eats the connect time.
            case Resolution.Resolved resolved -> dialer.dial(p.key(), resolved.addresses(), System.nanoTime());
        };
    }
}
