package io.continuum.broker.relay.dial;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.MutableView;
import io.continuum.broker.relay.api.Cidr;

/**
 * Builds target checks for tests: namespace {@code dynamo}, a synced view, and loopback made
 * dialable through {@code allowed_cidrs} so real sockets on this host can play publishers.
 */
final class Fixtures {
    static final String NS = "dynamo";
    static final AddressFilter LOOPBACK_ALLOWED = filter(List.of("127.0.0.0/8", "::1/128"));

    private Fixtures() {
    }

    static AddressFilter filter(List<String> allowedCidrs) {
        return new AddressFilter(allowedCidrs.stream().map(Cidr::parse).toList());
    }

    static UpstreamDialer dialer(Duration attempt, Duration budget, int maxDials, Connector connector) {
        return new UpstreamDialer(LOOPBACK_ALLOWED, attempt, budget, maxDials, SocketSettings.DEFAULTS, connector);
    }

    static TargetCheck check(MutableView view, NameResolver dns, Duration dnsTimeout, UpstreamDialer dialer) {
        return new TargetCheck(Set.of(NS), view, new TargetResolver(dns, dnsTimeout), dialer);
    }

    static Target.ZmqTcp target(String host, int port) {
        return new Target.ZmqTcp(NS, host, port);
    }
}
