package io.continuum.broker.demo;

import java.time.Duration;
import java.util.List;

import io.continuum.broker.metadata.watch.MetadataWatcher;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.EventBroker;
import io.continuum.broker.relay.api.Cidr;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.api.RelayMetrics;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.kube.FakeKubeApi;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.ServerIdentity;
import io.kubernetes.client.util.Config;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import io.continuum.broker.relay.api.Credential;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * The broker over the real metadata view (client-java against the in-process API server): only
 * what {@code event_channels} advertises as a ZMQ publisher can be dialed. A request-plane
 * {@code endpoints} address, a NATS channel and a ZmqBroker {@code xsub} endpoint are refused with
 * {@code target_not_advertised} (R-SEC-4, R-SEC-12, dynamo-worker-metadata.md), and nothing is dialed.
 */
class AdvertisedTargetsEndToEndTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    @Timeout(90)
    void onlyEventChannelPublishersAreDialable() throws Exception {
        EphemeralPki pki = EphemeralPki.create();
        ServerIdentity server = pki.localhostServer();
        String credential = "end-to-end-credential-0123456789abcdef";
        try (LoopbackListener pub = listener("pub"); LoopbackListener endpointPort = listener("endpoint");
             LoopbackListener natsPort = listener("nats"); LoopbackListener xsubPort = listener("xsub");
             LoopbackListener xpubPort = listener("xpub");
             FakeKubeApi kube = FakeKubeApi.builder().build();
             InProcessRouter router = InProcessRouter.builder().tls(server.key(), List.of(server.certificate()))
                     .credential(credential).start()) {
            kube.put("ns", DemoMetadata.resource("ns", 0, "dynamo", pub.port()));
            kube.put("ns", "{\"metadata\":{\"name\":\"mixed\"},\"spec\":{\"data\":{"
                    + "\"endpoints\":{\"dynamo/backend/generate\":\"127.0.0.1:" + endpointPort.port()
                    + "/1/generate\"},"
                    + "\"event_channels\":{"
                    + "\"dynamo/backend/nats/1\":{\"namespace\":\"dynamo\",\"transport\":{\"kind\":\"Nats\","
                    + "\"config\":{\"endpoint\":\"tcp://127.0.0.1:" + natsPort.port() + "\"}}},"
                    + "\"dynamo/backend/broker/1\":{\"namespace\":\"dynamo\",\"transport\":{\"kind\":\"ZmqBroker\","
                    + "\"config\":{\"xsub_endpoints\":[\"tcp://127.0.0.1:" + xsubPort.port() + "\"],"
                    + "\"xpub_endpoints\":[\"tcp://127.0.0.1:" + xpubPort.port() + "\"]}}}}}}}");
            try (MetadataWatcher view = MetadataWatcher.builder().namespaces(List.of("ns"))
                    .apiClient(Config.fromConfig(kube.kubeconfig().toString())).build().start()) {
                RelayConfig config = RelayConfig.builder().busUrl(router.url()).caCertificates(() -> List.of(pki.caCertificate()))
                        .credential(() -> Credential.of(credential)).clientId("e2e").kubernetesNamespace("ns")
                        .dynamoNamespaces(List.of("dynamo")).allowedCidrs(List.of(Cidr.parse("127.0.0.0/8"))).build();
                try (EventBroker broker = EventBroker.create(config, view, RelayMetrics.NOOP)) {
                    broker.start();
                    RouterSession session = router.awaitSession(WAIT);
                    session.subscribe(1, "dynamo", "127.0.0.1", endpointPort.port());
                    session.subscribe(2, "dynamo", "127.0.0.1", natsPort.port());
                    session.subscribe(3, "dynamo", "127.0.0.1", xsubPort.port());
                    for (long id = 1; id <= 3; id++) {
                        Frame.StreamRefused refused = assertInstanceOf(Frame.StreamRefused.class,
                                session.awaitAnswer(id, WAIT), "stream " + id);
                        assertEquals(Code.TARGET_NOT_ADVERTISED, refused.code(), "stream " + id);
                    }
                    session.subscribe(4, "dynamo", "127.0.0.1", xpubPort.port());
                    session.subscribe(5, "dynamo", "127.0.0.1", pub.port());
                    assertInstanceOf(Frame.StreamOpened.class, session.awaitAnswer(4, WAIT), "ZmqBroker xpub");
                    assertInstanceOf(Frame.StreamOpened.class, session.awaitAnswer(5, WAIT), "Zmq endpoint");
                    // Deleting the resource revokes the open stream (bus-protocol-v1.md section 6).
                    kube.delete("ns", "vllm-worker-0");
                    Frame.StreamClosed closed = session.await(Frame.StreamClosed.class, f -> f.streamId() == 5, WAIT);
                    assertEquals(Code.TARGET_NOT_ADVERTISED, closed.code());
                }
            }
        }
    }

    private static LoopbackListener listener(String name) {
        return LoopbackListener.open(name, 10);
    }
}
