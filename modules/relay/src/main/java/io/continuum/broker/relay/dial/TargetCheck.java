package io.continuum.broker.relay.dial;

import java.util.Objects;
import java.util.Set;

import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.Host;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Target;

/**
 * The target checks of one {@code subscribe}, bus-protocol-v1.md section 5 rows 4-10 (R-SEC
 * checks 1-6), in order; the first failing one decides the code:
 * <table>
 *     <caption>checks</caption>
 *     <tr><th>row</th><th>check</th><th>code</th></tr>
 *     <tr><td>4</td><td>valid {@code zmq_tcp}: namespace, host accepted by {@link Host#parse},
 *     port 1..65535 ({@code announced_source} and other kinds refused, R-BEH 10)</td>
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
 * 11 (HTTP/2 stream slot) comes after, once this returned {@link Outcome.Connected}.
 * <p>
 * Rows 4-7 are cheap and run on the caller's thread inside {@link #start}; rows 8-10 run on a
 * virtual thread of their own. Stage deadlines are per stage: DNS counts from the subscribe, the connect
 * budget from the end of DNS (then the session's slot and response-head deadlines follow). Create one per session (its {@link UpstreamDialer} holds the
 * session's dial permits).
 */
public final class TargetCheck {
    private final Set<String> dynamoNamespaces;
    private final PublisherView view;
    private final TargetResolver resolver;
    private final UpstreamDialer dialer;

    /**
     * A target check.
     *
     * @param dynamoNamespaces the configured {@code dynamo_namespaces}
     * @param view             the metadata view
     * @param resolver         name resolution with the DNS deadline
     * @param dialer           filter and dialer (one per session)
     */
    public TargetCheck(Set<String> dynamoNamespaces, PublisherView view, TargetResolver resolver,
                       UpstreamDialer dialer) {
        this.dynamoNamespaces = Set.copyOf(dynamoNamespaces);
        this.view = Objects.requireNonNull(view, "view");
        this.resolver = Objects.requireNonNull(resolver, "resolver");
        this.dialer = Objects.requireNonNull(dialer, "dialer");
    }

    /**
     * Starts checking and dialing. Rows 4-7 run now; when one fails the returned attempt is already
     * done. Otherwise resolution and dialing continue on a new virtual thread. Every deadline counts
     * from this call.
     *
     * @param target the subscribe's target
     * @return handle: await or observe its result, cancel it on {@code unsubscribe} or session end
     */
    public DialAttempt start(Target target) {
        long started = System.nanoTime();
        Prepared prepared = prepare(target);
        if (prepared.refusal != null) {
            return DialAttempt.finished(prepared.refusal);
        }
        DialAttempt attempt = new DialAttempt(started);
        Thread worker = Thread.ofVirtual().name("continuum-dial").unstarted(() -> run(prepared, attempt));
        attempt.runOn(worker);
        worker.start();
        return attempt;
    }

    /**
     * Checks and dials on the calling thread (blocking; for callers already on a virtual thread of
     * their own). Interrupting the thread cancels.
     *
     * @param target the subscribe's target
     * @return outcome: {@link Outcome.Cancelled} when interrupted
     */
    public Outcome checkAndConnect(Target target) {
        long started = System.nanoTime();
        Prepared prepared = prepare(target);
        if (prepared.refusal != null) {
            return prepared.refusal;
        }
        DialAttempt attempt = new DialAttempt(started);
        attempt.runOn(Thread.currentThread());
        run(prepared, attempt);
        try {
            return attempt.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            attempt.cancel();
            return Outcome.Cancelled.INSTANCE;
        }
    }

    /** Result of rows 4-7: a refusal, or the parsed host and port to resolve and dial. */
    private record Prepared(Outcome.Refused refusal, Host host, int port) {
    }

    private Prepared prepare(Target target) {
        Target.ZmqTcp zmq;
        switch (target) {
            case Target.ZmqTcp z -> zmq = z;
            case Target.AnnouncedSource ignored -> {
                return refuse(Code.UNSUPPORTED_TARGET, "announced_source targets are not served by the broker");
            }
            case Target.Unsupported u -> {
                return refuse(Code.UNSUPPORTED_TARGET, "unsupported target"
                        + (u.reason() == null ? "" : ": " + u.reason()));
            }
            case null -> {
                return refuse(Code.UNSUPPORTED_TARGET, "missing target");
            }
        }
        // Row 4: a valid zmq_tcp target.
        if (zmq.namespace() == null || zmq.namespace().isEmpty()) {
            return refuse(Code.UNSUPPORTED_TARGET, "missing namespace");
        }
        if (zmq.port() < 1 || zmq.port() > 65535) {
            return refuse(Code.UNSUPPORTED_TARGET, "port out of range 1..65535");
        }
        Host host;
        try {
            host = Host.parse(zmq.host());
        } catch (Host.InvalidHostException e) {
            return refuse(Code.UNSUPPORTED_TARGET, "invalid host: " + e.getMessage());
        }
        // Row 5: the namespace is one this broker covers.
        if (!dynamoNamespaces.contains(zmq.namespace())) {
            return refuse(Code.TARGET_NOT_ADVERTISED, "namespace not covered by this broker");
        }
        // Row 6: the view has completed its initial sync.
        if (!view.isSynced()) {
            return refuse(Code.TARGET_NOT_ADVERTISED, "metadata not synced yet");
        }
        // Row 7: exactly advertised.
        Advertisement advertisement = view.check(PublisherKey.of(zmq.namespace(), host, zmq.port()));
        if (!advertisement.advertised()) {
            return refuse(Code.TARGET_NOT_ADVERTISED, advertisement == Advertisement.NOT_SYNCED
                    ? "metadata not synced yet" : "publisher not advertised");
        }
        return new Prepared(null, host, zmq.port());
    }

    private static Prepared refuse(Code code, String reason) {
        return new Prepared(new Outcome.Refused(code, reason), null, 0);
    }

    private void run(Prepared prepared, DialAttempt attempt) {
        try {
            // Row 8: resolve within the DNS deadline.
            Resolution resolution = resolver.resolve(prepared.host,
                    attempt.startedNanos() + resolver.dnsTimeout().toNanos());
            switch (resolution) {
                case Resolution.Failed failed -> attempt.finish(new Outcome.Refused(Code.UPSTREAM_CONNECT_FAILED,
                        failed.reason()));
                // Rows 9 and 10: filter every address right before dialing, then connect. Each stage has its
                // own deadline (R-OPEN): the connect budget counts from the end of DNS, so a slow answer
                // within the DNS deadline never eats the connect time.
                case Resolution.Resolved resolved -> attempt.finish(
                        dialer.dial(resolved.addresses(), prepared.port, System.nanoTime(), attempt));
            }
        } catch (InterruptedException e) {
            attempt.cancel();
        } catch (RuntimeException | Error e) {
            attempt.finish(new Outcome.Refused(Code.INTERNAL_ERROR, "internal error while dialing"));
            throw e;
        }
    }
}
