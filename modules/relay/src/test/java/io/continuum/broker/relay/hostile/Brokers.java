package io.continuum.broker.relay.hostile;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.relay.CountingMetrics;
import io.continuum.broker.relay.EventBroker;
import io.continuum.broker.relay.api.Cidr;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.api.RelayConfig;

/**
 * A broker built with the public API against any bus URL (a raw HTTP/2 peer, or a second broker on
 * a {@link BrokerHarness}'s router), configured like the harness's.
 */
final class Brokers {
    private Brokers() {
    }

    static EventBroker against(URI busUrl, String clientId, PublisherView view, CountingMetrics metrics) {
        RelayConfig config = RelayConfig.builder().busUrl(busUrl).caCertificates(() -> List.of(BrokerHarness.PKI.caCertificate()))
                .credential(() -> Credential.of(BrokerHarness.CREDENTIAL)).clientId(clientId).kubernetesNamespace("gpu-serving")
                .dynamoNamespaces(List.of(BrokerHarness.NAMESPACE)).allowedCidrs(List.of(Cidr.parse("127.0.0.0/8")))
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200)).build();
        return EventBroker.create(config, view, metrics);
    }

    /** The spec's deadlines with the connect budget and the dial bound replaced. */
    static RelayConfig.Timeouts dialing(Duration connectBudget, int maxConcurrentDials) {
        RelayConfig.Timeouts s = RelayConfig.Timeouts.SPEC;
        return new RelayConfig.Timeouts(s.dnsResolution(), connectBudget, s.streamSlot(), s.responseHead(),
                s.stableSession(), s.sessionBufferBytes(), maxConcurrentDials);
    }

    /** The spec's deadlines with the session buffer budget (R-BUF 2) replaced. */
    static RelayConfig.Timeouts sessionBuffer(long bytes) {
        RelayConfig.Timeouts s = RelayConfig.Timeouts.SPEC;
        return new RelayConfig.Timeouts(s.dnsResolution(), s.upstreamConnectTotal(), s.streamSlot(),
                s.responseHead(), s.stableSession(), bytes, s.maxConcurrentDials());
    }

    /** The spec's deadlines with the response-head deadline (also the wait for the router to end its response after upstream_closed) replaced. */
    static RelayConfig.Timeouts responseHead(Duration d) {
        RelayConfig.Timeouts s = RelayConfig.Timeouts.SPEC;
        return new RelayConfig.Timeouts(s.dnsResolution(), s.upstreamConnectTotal(), s.streamSlot(), d,
                s.stableSession(), s.sessionBufferBytes(), s.maxConcurrentDials());
    }
}
