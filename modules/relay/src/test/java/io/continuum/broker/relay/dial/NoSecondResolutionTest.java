package io.continuum.broker.relay.dial;

import io.continuum.broker.testing.net.LoopbackListener;
import static io.continuum.broker.relay.dial.Fixtures.NS;
import static io.continuum.broker.relay.dial.Fixtures.check;
import static io.continuum.broker.relay.dial.Fixtures.dialer;
import static io.continuum.broker.relay.dial.Fixtures.target;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.net.InetAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.continuum.broker.relay.MutableView;

import org.junit.jupiter.api.Test;

/**
 * R-SEC 7 and 9a: the filter runs on the resolved address right before dialing, and the broker
 * dials exactly that address, never resolving the name again. A resolver that answers differently
 * on every lookup (DNS rebinding) cannot swap in another address between check and dial.
 */
class NoSecondResolutionTest {

    @Test
    void theDialedAddressIsTheInstanceThatPassedTheFilterAndTheNameIsResolvedOnce() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 8)) {
            int port = publisher.port();
            InetAddress first = InetAddress.ofLiteral("127.0.0.1");
            AtomicInteger lookups = new AtomicInteger();
            // First answer allowed, every later answer the metadata address.
            NameResolver rebinding = name -> lookups.getAndIncrement() == 0
                    ? List.of(first) : List.of(InetAddress.ofLiteral("169.254.169.254"));
            RecordingConnector connector = new RecordingConnector();
            TargetCheck check = check(new MutableView().synced(true).advertise(NS, "rebind.publisher.test", port), rebinding,
                    Duration.ofSeconds(5), dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4, connector));

            DialResult outcome = BackgroundDial.start(check, target("rebind.publisher.test", port))
                    .await(Duration.ofSeconds(30));

            DialResult.Connected connected = assertInstanceOf(DialResult.Connected.class, outcome);
            try (Socket socket = connected.socket(); Socket accepted = publisher.awaitConnection()) {
                assertEquals(1, lookups.get(), "resolved once");
                assertEquals(1, connector.attempts.size());
                assertFalse(connector.attempts.getFirst().isUnresolved(), "dialed by address, not by name");
                assertSame(first, connector.attempts.getFirst().getAddress(), "exactly the filtered instance");
                assertSame(first, connected.remote().getAddress());
                assertEquals(socket.getLocalPort(), accepted.getPort());
            }
        }
    }
}
