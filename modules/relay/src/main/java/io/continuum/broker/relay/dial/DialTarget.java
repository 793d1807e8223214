package io.continuum.broker.relay.dial;

import java.util.Objects;

import io.continuum.broker.metadata.Host;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.protocol.Target;

/**
 * A {@code subscribe}'s target, read once (bus-protocol-v1.md section 5 row 4): a {@code zmq_tcp} publisher with
 * its key and parsed host, or the reason it is not one. A stream reads its target when the subscribe arrives and
 * keeps the key from then on, because a revocation must find it while the dial is still running; the check then
 * works on the parsed host and never parses the text again.
 */
public sealed interface DialTarget {
    /**
     * Reads a target.
     *
     * @param target the subscribe's target, null when the frame carried none
     * @return the publisher, or {@link Unsupported} with a log-safe reason
     */
    static DialTarget of(Target target) {
        Target.ZmqTcp zmq;
        switch (target) {
            case Target.ZmqTcp z -> zmq = z;
            case Target.AnnouncedSource ignored -> {
                return new Unsupported("announced_source targets are not served by the broker");
            }
            case Target.Unsupported u -> {
                return new Unsupported("unsupported target" + (u.reason() == null ? "" : ": " + u.reason()));
            }
            case null -> {
                return new Unsupported("missing target");
            }
        }
        if (zmq.namespace() == null || zmq.namespace().isEmpty()) {
            return new Unsupported("missing namespace");
        }
        if (zmq.port() < 1 || zmq.port() > 65535) {
            return new Unsupported("port out of range 1..65535");
        }
        Host host;
        try {
            host = Host.parse(zmq.host());
        } catch (Host.InvalidHostException e) {
            return new Unsupported("invalid host: " + e.getMessage());
        }
        return new Publisher(PublisherKey.of(zmq.namespace(), host, zmq.port()), host);
    }

    /**
     * A well-formed {@code zmq_tcp} target; whether it is covered, advertised and allowed is still to be checked.
     *
     * @param key  namespace, normalised host and port: what the metadata view is asked about
     * @param host the parsed host, resolved and dialed
     */
    record Publisher(PublisherKey key, Host host) implements DialTarget {
        /** Validates. */
        public Publisher {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(host, "host");
        }
    }

    /**
     * Not a target the broker serves: answered {@code unsupported_target}.
     *
     * @param reason short, log-safe reason
     */
    record Unsupported(String reason) implements DialTarget {
        /** Validates. */
        public Unsupported {
            Objects.requireNonNull(reason, "reason");
        }
    }
}
