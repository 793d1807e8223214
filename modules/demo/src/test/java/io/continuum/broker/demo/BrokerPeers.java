package io.continuum.broker.demo;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.kube.FakeKubeApi;
import io.continuum.broker.testing.pki.EphemeralPki;
import io.continuum.broker.testing.pki.ServerIdentity;

/**
 * What a broker in a child JVM ({@link BrokerProcess}) runs against: an in-process TLS router accepting one
 * credential, the fake Kubernetes API, and a loopback listener standing in for a publisher. The CA and the
 * credential are written into the test's directory ({@link BrokerProcess#writeSecrets}).
 */
final class BrokerPeers implements AutoCloseable {
    final InProcessRouter router;
    final FakeKubeApi kube;
    final LoopbackListener publisher;

    private BrokerPeers(InProcessRouter router, FakeKubeApi kube, LoopbackListener publisher) {
        this.router = router;
        this.kube = kube;
        this.publisher = publisher;
    }

    static BrokerPeers start(Path dir, String credential) throws IOException {
        EphemeralPki pki = EphemeralPki.create();
        ServerIdentity server = pki.localhostServer();
        InProcessRouter router = InProcessRouter.builder().tls(server.key(), List.of(server.certificate()))
                .credential(credential).start();
        LoopbackListener publisher = LoopbackListener.open("publisher", 10);
        FakeKubeApi kube = FakeKubeApi.builder().build();
        BrokerProcess.writeSecrets(dir, pki, credential);
        return new BrokerPeers(router, kube, publisher);
    }

    @Override
    public void close() throws IOException {
        router.close();
        kube.close();
        publisher.close();
    }
}
