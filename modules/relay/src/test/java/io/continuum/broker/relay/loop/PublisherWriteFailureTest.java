package io.continuum.broker.relay.loop;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.logging.Level;
import java.util.random.RandomGenerator;

import io.continuum.broker.event.EventFormatter;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.relay.CountingMetrics;
import io.continuum.broker.relay.MutableView;
import io.continuum.broker.relay.api.RelayConfig;
import io.continuum.broker.relay.dial.DialResult;
import io.continuum.broker.relay.dial.DialTarget;
import io.continuum.broker.relay.dial.RefusalLog;
import io.continuum.broker.relay.transport.TransportSettings;
import io.continuum.broker.testing.bus.InProcessRouter;
import io.continuum.broker.testing.bus.RouterDataStream;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.logs.LogLines;
import io.continuum.broker.testing.logs.Logfmt;
import io.continuum.broker.testing.net.LoopbackListener;
import org.junit.jupiter.api.Test;
import io.continuum.broker.relay.api.Credential;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import io.continuum.broker.relay.session.StreamRegistry;
import io.continuum.broker.relay.stream.DataStream;
import io.continuum.broker.relay.stream.TargetDialer;
import io.continuum.broker.relay.transport.BusConnector;

/**
 * Section 6: a socket error toward the publisher, on the write side too, ends the stream with
 * {@code stream_closed upstream_closed}, never {@code buffer_overflow}. The publisher keeps sending while
 * writes to it fail: the target dialer connects a real socket and shuts its output down before the broker gets it,
 * so the broker's first write to the publisher fails (as on a pipe broken on the way) while its reads still work.
 */
class PublisherWriteFailureTest {
    @Test
    void aFailedWriteToThePublisherIsUpstreamClosedNotBufferOverflow() throws Exception {
        int rounds = 5;
        try (LogLines logs = LogLines.capture(DataStream.class.getName(),
                new EventFormatter(EventFormatter.Style.LOGFMT, false), Level.FINE);
             LoopbackListener publisher = LoopbackListener.open("publisher", 50);
             InProcessRouter router = InProcessRouter.builder()
                     .tls(BrokerHarness.SERVER.key(), List.of(BrokerHarness.SERVER.certificate()))
                     .credential(BrokerHarness.CREDENTIAL).start()) {
            // The publisher of stream N starts sending the moment the broker's write to it failed (its debug event
            // says so) and goes on (256 KiB in 1 KiB writes, well within the stream's budget): the broker reads
            // bytes after the failure. Streams are subscribed one after the other, so accepts come in id order.
            Thread talker = Thread.ofVirtual().start(() -> {
                try {
                    for (long id = 1; id <= rounds; id++) {
                        Socket s = publisher.awaitConnection();
                        String streamId = String.valueOf(id);
                        try (s; OutputStream out = s.getOutputStream()) {
                            logs.await(l -> "publisher_write_failed".equals(Logfmt.parse(l).get("event"))
                                    && streamId.equals(Logfmt.parse(l).get("stream_id")), WAIT);
                            byte[] burst = new byte[1024];
                            for (int i = 0; i < 256; i++) {
                                out.write(burst);
                            }
                            s.getInputStream().read(); // until the broker closes it
                        } catch (IOException gone) {
                            // the broker closed it
                        }
                    }
                } catch (InterruptedException | AssertionError over) {
                    // test over
                }
            });
            TargetDialer dialer = target -> {
                Socket s = null;
                try {
                    s = SocketChannel.open().socket();
                    s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), publisher.port()), 5_000);
                    s.shutdownOutput();
                } catch (IOException e) {
                    if (s != null) {
                        try {
                            s.close();
                        } catch (IOException ignored) {
                            // closing
                        }
                    }
                    return new DialResult.Refused(Code.UPSTREAM_CONNECT_FAILED, "test dial failed");
                }
                return new DialResult.Connected(((DialTarget.Publisher) target).key(), s,
                        (InetSocketAddress) s.getRemoteSocketAddress());
            };
            RelayConfig config = RelayConfig.builder().busUrl(router.url()).caCertificates(() -> List.of(BrokerHarness.PKI.caCertificate()))
                    .credential(() -> Credential.of(BrokerHarness.CREDENTIAL)).clientId("broker-a").kubernetesNamespace("k")
                    .dynamoNamespaces(List.of(NAMESPACE)).build();
            CountingMetrics metrics = new CountingMetrics();
            SessionLoop loop = new SessionLoop(config, new MutableView().synced(true), BusConnector.of(TransportSettings.defaults()),
                    dialer, metrics, new StreamRegistry(new RefusalLog()), RandomGenerator.getDefault(),
                    System::nanoTime, "test");
            loop.start();
            try {
                RouterSession session = router.awaitSession(WAIT);
                for (long id = 1; id <= rounds; id++) {
                    session.subscribe(id, NAMESPACE, "127.0.0.1", publisher.port());
                    assertInstanceOf(Frame.StreamOpened.class, session.awaitAnswer(id, WAIT));
                    RouterDataStream stream = router.awaitDataStream(id, WAIT);
                    // The router reads everything the broker relays, so no budget ever fills.
                    Thread.ofVirtual().start(() -> {
                        try (InputStream in = stream.fromBroker()) {
                            in.transferTo(OutputStream.nullOutputStream());
                        } catch (IOException ignored) {
                            // ended
                        }
                    });
                    stream.writeToBroker(new byte[] {1, 2, 3});
                    long streamId = id;
                    Frame.StreamClosed closed = session.await(Frame.StreamClosed.class, f -> f.streamId() == streamId,
                            WAIT);
                    assertEquals(Code.UPSTREAM_CLOSED, closed.code(), "stream " + id);
                }
                assertEquals(0, metrics.get("stream_closes_total{code=buffer_overflow}"));
            } finally {
                loop.abort();
                publisher.close();
                talker.interrupt();
                talker.join(WAIT);
            }
        }
    }
}
