package io.continuum.broker.relay.hostile;

import java.nio.ByteBuffer;
import java.net.Socket;
import java.time.Duration;
import java.util.List;

import io.continuum.broker.h2.ErrorCode;
import io.continuum.broker.metadata.watch.MetadataWatcher;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.Target;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.relay.CountingMetrics;
import io.continuum.broker.relay.EventBroker;
import io.continuum.broker.relay.dial.FullBacklogListener;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.bus.RouterDataStream;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.kube.FakeKubeApi;
import io.continuum.broker.testing.kube.Fault;
import io.continuum.broker.testing.kube.RequestKind;
import io.continuum.broker.testing.net.LoopbackListener;
import io.continuum.broker.testing.router.RawBusRouter.Windows;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawH2Peer;
import io.kubernetes.client.util.Config;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Revocation, bus-protocol-v1.md section 6. Already covered elsewhere: an open stream whose target
 * is withdrawn has its socket closed and {@code stream_closed target_not_advertised} sent
 * ({@code OverflowAndRevocationTest}, and end to end through a deleted resource in the demo's
 * {@code AdvertisedTargetsEndToEndTest}). Here: the RST_STREAM CANCEL on the wire, a stream still
 * opening refused instead, and an API outage alone (watches dropped, lists answering 500) that
 * closes nothing.
 */
class RevocationTest {
    private static final int CANCEL = ErrorCode.CANCEL.code();

    /**
     * Issue 44 item 1: any worker Pod can rewrite its own resource, so a burst of metadata events must not start a
     * revocation pass (a thread and a scan of every stream) per event. The first pass is held inside its check
     * while 10,000 events fire, the last of which withdraws the open stream's target; once let go, exactly one
     * more pass runs, and it is the one that sees the withdrawal and revokes the stream. Before, every event
     * started a pass of its own: 10,001 of them.
     */
    @Test
    void aBurstOfMetadataEventsMakesAtMostOnePendingPassAndThePassAfterItSeesTheFinalState() throws Exception {
        try (BrokerHarness h = new BrokerHarness()) {
            BrokerHarness.Subscribed s = h.startSubscribed(1);
            java.util.concurrent.atomic.AtomicInteger passes = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch letGo = new java.util.concurrent.CountDownLatch(1);
            h.view.afterCheck(key -> {
                if (!Thread.currentThread().getName().equals("session-revocation")) {
                    return; // a subscribe's own check
                }
                if (passes.incrementAndGet() == 1) {
                    held.countDown();
                    try {
                        letGo.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            h.view.advertise(NAMESPACE, "10.0.0.1", 1); // the first event: its pass is held in its check
            assertTrue(held.await(WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS), "first pass");
            for (int i = 2; i < 10_000; i++) {
                h.view.advertise(NAMESPACE, "10.0.0.1", i);
            }
            h.view.withdraw(NAMESPACE, "127.0.0.1", s.publisher().port()); // event 10,000: the final state

            letGo.countDown();

            Frame.StreamClosed closed = s.session().await(Frame.StreamClosed.class, f -> f.streamId() == 1, WAIT);
            assertEquals(Code.TARGET_NOT_ADVERTISED, closed.code());
            assertEquals(2, passes.get(), "the held pass, then one for the whole burst");
        }
    }

    /** On the wire (raw HTTP/2 peer): the revoked data stream gets RST_STREAM CANCEL, then stream_closed. */
    @Test
    void anOpenStreamWhoseTargetIsWithdrawnIsResetWithCancelAndReportedTargetNotAdvertised() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 10);
             BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.startAdvertising(publisher.port())) {
            EventBroker broker = raw.broker();
            RawBusRouter session = RawBusRouter.accept(raw.peer(), WAIT, Windows.OPEN_SESSION_ONLY).sendSessionHead();
            session.sendPacked(FrameCodec.encode(RawBusRouter.welcome("raw")),
                    FrameCodec.encode(new Frame.Subscribe(5,
                            new Target.ZmqTcp(NAMESPACE, "127.0.0.1", publisher.port()))));
            int dataStream = session.answerNextDataStream(WAIT);
            Socket upstream = publisher.awaitConnection();
            await(() -> broker.openStreams() == 1, "open");
            raw.view().withdraw(NAMESPACE, "127.0.0.1", publisher.port());
            int reset = dataStream;
            RawH2Peer.Frame rst = null;
            while (rst == null || session.busFrames().stream().noneMatch(f -> f instanceof Frame.StreamClosed)) {
                RawH2Peer.Frame f = session.next(WAIT);
                if (f.type() == RawH2Peer.Frame.RST_STREAM && f.streamId() == reset) {
                    rst = f;
                }
            }
            assertEquals(CANCEL, ByteBuffer.wrap(rst.payload()).getInt(), "RST_STREAM CANCEL");
            Frame.StreamClosed closed = (Frame.StreamClosed) session.busFrames().stream()
                    .filter(f -> f instanceof Frame.StreamClosed).findFirst().orElseThrow();
            assertEquals(5, closed.streamId());
            assertEquals(Code.TARGET_NOT_ADVERTISED, closed.code());
            assertEquals(-1, upstream.getInputStream().read(), "the publisher socket is closed");
        }
    }

    @Test
    void aStreamStillDialingWhenItsTargetIsWithdrawnIsRefusedTargetNotAdvertised() throws Exception {
        DialRecorder dials = new DialRecorder();
        try (FullBacklogListener blackhole = new FullBacklogListener();
             BrokerHarness h = new BrokerHarness(c -> c, r -> r, false, dials)) {
            h.view.advertise(NAMESPACE, "127.0.0.1", blackhole.port());
            RouterSession session = h.startSession();
            session.subscribe(1, NAMESPACE, "127.0.0.1", blackhole.port());
            await(() -> dials.inFlight() == 1, "the dial hangs");
            h.view.withdraw(NAMESPACE, "127.0.0.1", blackhole.port());
            Frame.StreamRefused refused = assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(1, WAIT));
            assertEquals(Code.TARGET_NOT_ADVERTISED, refused.code());
            await(() -> dials.inFlight() == 0, "the dial in progress is abandoned");
            await(() -> h.broker.openStreams() == 0 && h.broker.status().openStreams().isEmpty(), "nothing open");
            assertEquals(0, h.metrics.get("subscribes_total{result=opened}"));
            assertTrue(session.drainReceived().stream().noneMatch(f -> f instanceof Frame.StreamOpened
                    || f instanceof Frame.StreamRefused), "answered exactly once");
        }
    }

    @Test
    void anApiOutageAloneClosesNothingAndADeletionAfterItRevokes() throws Exception {
        String ns = "gpu-serving";
        CountingMetrics metrics = new CountingMetrics();
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 10);
             FakeKubeApi kube = FakeKubeApi.builder().build();
             InProcessRouter router = InProcessRouter.builder()
                     .tls(BrokerHarness.SERVER.key(), List.of(BrokerHarness.SERVER.certificate()))
                     .credential(BrokerHarness.CREDENTIAL).start()) {
            kube.put(ns, resource(ns, "worker-0", publisher.port()));
            try (MetadataWatcher view = MetadataWatcher.builder().namespaces(List.of(ns))
                    .apiClient(Config.fromConfig(kube.kubeconfig().toString()))
                    .backoff(Duration.ofMillis(20), Duration.ofMillis(100)).build().start();
                 EventBroker broker = Brokers.against(router.url(), "broker-a", view, metrics)) {
                assertTrue(view.awaitSynced(WAIT));
                broker.start();
                RouterSession session = router.awaitSession(WAIT);
                session.subscribe(1, NAMESPACE, "127.0.0.1", publisher.port());
                Socket upstream = publisher.awaitConnection();
                RouterDataStream stream = router.awaitDataStream(1, WAIT);

                // The outage: every watch dropped, the history compacted (so the watcher must relist), and
                // the next three lists answered 500.
                long before = kube.requests().size();
                for (int i = 0; i < 3; i++) {
                    kube.inject(RequestKind.LIST, Fault.status(500));
                }
                kube.compact();
                kube.dropWatches();
                await(() -> kube.requests().stream().skip(before).filter(r -> r.kind() == RequestKind.LIST).count() >= 4,
                        "three failed lists, then one that succeeds");
                kube.awaitOpenWatches(ns, 1, WAIT);

                upstream.getOutputStream().write(new byte[] {1, 2, 3});
                assertArrayEquals(new byte[] {1, 2, 3}, stream.readFromBroker(3), "the stream outlived the outage");
                assertEquals(1, broker.openStreams());
                assertTrue(session.drainReceived().stream().noneMatch(f -> f instanceof Frame.StreamClosed),
                        "nothing was closed");

                // The positive control: a real withdrawal (the resource deleted) revokes at once.
                kube.delete(ns, "worker-0");
                Frame.StreamClosed closed = session.await(Frame.StreamClosed.class, f -> f.streamId() == 1, WAIT);
                assertEquals(Code.TARGET_NOT_ADVERTISED, closed.code());
                assertEquals(-1, upstream.getInputStream().read(), "the publisher socket is closed");
            }
        }
    }

    private static String resource(String kubernetesNamespace, String name, int port) {
        return "{\"apiVersion\":\"nvidia.com/v1alpha1\",\"kind\":\"DynamoWorkerMetadata\","
                + "\"metadata\":{\"name\":\"" + name + "\",\"namespace\":\"" + kubernetesNamespace + "\"},"
                + "\"spec\":{\"data\":{\"event_channels\":{\"" + NAMESPACE + "/backend/kv-events/2a\":"
                + "{\"type\":\"EventChannel\",\"namespace\":\"" + NAMESPACE + "\",\"component\":\"backend\","
                + "\"topic\":\"kv-events\",\"instance_id\":42,\"transport\":{\"kind\":\"Zmq\","
                + "\"config\":{\"endpoint\":\"tcp://127.0.0.1:" + port + "\"}}}}}}}";
    }
}
