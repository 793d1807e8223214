package io.continuum.broker.relay.dial;

import io.continuum.broker.testing.net.LoopbackListener;
import static io.continuum.broker.relay.dial.Fixtures.NS;
import static io.continuum.broker.relay.dial.Fixtures.check;
import static io.continuum.broker.relay.dial.Fixtures.dialer;
import static io.continuum.broker.relay.dial.Fixtures.target;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.continuum.broker.relay.MutableView;
import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.PublisherView;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Target;

/**
 * The order of the target checks (bus-protocol-v1.md section 5 rows 4-10; R-SEC checks 1-6):
 * the first failing check decides the code, and nothing later is consulted: no lookup before a
 * target is advertised, no dial before it is allowed.
 */
class CheckOrderTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final TableResolver dns = new TableResolver()
            .map("blocked.publisher.test", "127.0.0.1", "169.254.169.254")
            .map("outside.publisher.test", "192.0.2.1");
    private final RecordingConnector connector = new RecordingConnector();

    private TargetCheck checkWith(PublisherView view, AddressFilter filter) {
        return new TargetCheck(Set.of(NS, "dynamo-canary"), view, new TargetResolver(dns, Duration.ofSeconds(5)),
                new UpstreamDialer(filter, Duration.ofSeconds(5), Duration.ofSeconds(10), 4, SocketSettings.DEFAULTS,
                        connector));
    }

    private DialResult.Refused refusal(TargetCheck check, Target target) throws Exception {
        DialResult outcome = BackgroundDial.start(check, target).await(WAIT);
        return assertInstanceOf(DialResult.Refused.class, outcome);
    }

    private void assertNothingLookedUpOrDialed() {
        assertEquals(0, dns.lookups(), "no DNS lookup");
        assertEquals(List.of(), connector.attempts, "no connect");
    }

    @Test
    void rowFour_announcedSourceIsUnsupported_RBEH10() throws Exception {
        DialResult.Refused r = refusal(checkWith(new MutableView().synced(true), AddressFilter.specialRangesOnly()),
                new Target.AnnouncedSource("kv-1"));
        assertEquals(Code.UNSUPPORTED_TARGET, r.code());
        assertNothingLookedUpOrDialed();
    }

    @Test
    void rowFour_unknownKindIsUnsupported() throws Exception {
        DialResult.Refused r = refusal(checkWith(new MutableView().synced(true), AddressFilter.specialRangesOnly()),
                new Target.Unsupported("udp", "unknown kind"));
        assertEquals(Code.UNSUPPORTED_TARGET, r.code());
        assertEquals("unsupported target: unknown kind", r.reason());
    }

    @Test
    void rowFour_missingNamespaceIsUnsupported() throws Exception {
        DialResult.Refused r = refusal(checkWith(new MutableView().synced(true), AddressFilter.specialRangesOnly()),
                new Target.ZmqTcp("", "10.0.0.1", 5557));
        assertEquals(Code.UNSUPPORTED_TARGET, r.code());
    }

    @Test
    void rowFourBeforeFive_anInvalidHostInAnUncoveredNamespaceIsUnsupported() throws Exception {
        DialResult.Refused r = refusal(checkWith(new MutableView().synced(false), AddressFilter.specialRangesOnly()),
                new Target.ZmqTcp("elsewhere", "0x7f.1", 5557));
        assertEquals(Code.UNSUPPORTED_TARGET, r.code());
        assertTrue(r.reason().startsWith("invalid host: "), r.reason());
    }

    @Test
    void rowFiveBeforeSix_uncoveredNamespaceWhileNotSyncedNamesTheNamespace() throws Exception {
        DialResult.Refused r = refusal(checkWith(new MutableView().synced(false), AddressFilter.specialRangesOnly()),
                new Target.ZmqTcp("elsewhere", "10.0.0.1", 5557));
        assertEquals(new DialResult.Refused(Code.TARGET_NOT_ADVERTISED, "namespace not covered by this broker"), r);
    }

    @Test
    void rowFive_uncoveredNamespaceIsNotAdvertisedEvenIfTheViewHasTheKey() throws Exception {
        MutableView view = new MutableView().synced(true).advertise("elsewhere", "10.0.0.1", 5557);
        DialResult.Refused r = refusal(checkWith(view, AddressFilter.specialRangesOnly()),
                new Target.ZmqTcp("elsewhere", "10.0.0.1", 5557));
        assertEquals(Code.TARGET_NOT_ADVERTISED, r.code());
        assertNothingLookedUpOrDialed();
    }

    @Test
    void rowSix_beforeTheInitialSyncNothingIsAdvertised_RMETA1() throws Exception {
        MutableView view = new MutableView().advertise(NS, "blocked.publisher.test", 5557);
        DialResult.Refused r = refusal(checkWith(view, AddressFilter.specialRangesOnly()),
                target("blocked.publisher.test", 5557));
        assertEquals(new DialResult.Refused(Code.TARGET_NOT_ADVERTISED, "metadata not synced yet"), r);
        assertNothingLookedUpOrDialed();
    }

    @Test
    void rowSeven_aViewAnsweringNotSyncedIsNotAdvertised() throws Exception {
        PublisherView racing = new PublisherView() {
            @Override
            public boolean isSynced() {
                return true;
            }

            @Override
            public Advertisement check(PublisherKey key) {
                return Advertisement.NOT_SYNCED;
            }

            @Override
            public AutoCloseable onChange(Runnable listener) {
                return () -> { };
            }
        };
        DialResult.Refused r = refusal(checkWith(racing, AddressFilter.specialRangesOnly()), target("10.0.0.1", 5557));
        assertEquals(Code.TARGET_NOT_ADVERTISED, r.code());
    }

    @Test
    void rowSevenBeforeNine_aBlockedAddressThatIsNotAdvertisedIsNotAdvertised() throws Exception {
        TargetCheck check = checkWith(new MutableView().synced(true).advertise(NS, "10.0.0.1", 5557),
                AddressFilter.specialRangesOnly());
        assertEquals(Code.TARGET_NOT_ADVERTISED, refusal(check, target("127.0.0.1", 5557)).code());
        assertEquals(Code.TARGET_NOT_ADVERTISED, refusal(check, target("169.254.169.254", 80)).code());
        assertEquals(Code.TARGET_NOT_ADVERTISED, refusal(check, target("blocked.publisher.test", 5557)).code());
        assertNothingLookedUpOrDialed();
    }

    @Test
    void rowSeven_matchIsExactOnNamespaceHostAndPort_RSEC4() throws Exception {
        MutableView view = new MutableView().synced(true).advertise(NS, "blocked.publisher.test", 5557);
        TargetCheck check = checkWith(view, AddressFilter.specialRangesOnly());
        assertEquals(Code.TARGET_NOT_ADVERTISED, refusal(check, target("blocked.publisher.test", 5558)).code());
        assertEquals(Code.TARGET_NOT_ADVERTISED,
                refusal(check, new Target.ZmqTcp("dynamo-canary", "blocked.publisher.test", 5557)).code());
        assertEquals(Code.TARGET_NOT_ADVERTISED, refusal(check, target("other.publisher.test", 5557)).code());
        assertNothingLookedUpOrDialed();
        // DNS names compare case-insensitively: this one is advertised, and then filtered.
        assertEquals(Code.TARGET_NOT_ALLOWED, refusal(check, target("Blocked.Publisher.TEST", 5557)).code());
    }

    @Test
    void rowEightBeforeNine_aNameThatDoesNotResolveIsUpstreamConnectFailed() throws Exception {
        TargetCheck check = checkWith(new MutableView().synced(true).advertise(NS, "gone.publisher.test", 5557),
                Fixtures.filter(List.of("10.0.0.0/8")));
        assertEquals(Code.UPSTREAM_CONNECT_FAILED, refusal(check, target("gone.publisher.test", 5557)).code());
        assertEquals(List.of(), connector.attempts);
    }

    @Test
    void rowNineBeforeTen_everyAddressBlockedIsTargetNotAllowedWithoutDialing() throws Exception {
        TargetCheck check = checkWith(new MutableView().synced(true).advertise(NS, "blocked.publisher.test", 5557),
                AddressFilter.specialRangesOnly());
        DialResult.Refused r = refusal(check, target("blocked.publisher.test", 5557));
        assertEquals(new DialResult.Refused(Code.TARGET_NOT_ALLOWED, "loopback, link-local"), r);
        assertEquals(1, dns.lookups());
        assertEquals(List.of(), connector.attempts);
    }

    @Test
    void rowTen_anAllowedAddressThatDoesNotAnswerIsUpstreamConnectFailed() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        TargetCheck check = check(new MutableView().synced(true).advertise(NS, "127.0.0.1", closedPort), dns,
                Duration.ofSeconds(5), dialer(Duration.ofSeconds(5), Duration.ofSeconds(10), 4, connector));
        assertEquals(Code.UPSTREAM_CONNECT_FAILED, refusal(check, target("127.0.0.1", closedPort)).code());
        assertEquals(1, connector.attempts.size());
    }

    @Test
    void theChecksRunOnTheCallersThread() {
        TargetCheck check = checkWith(new MutableView().synced(true).advertise(NS, "blocked.publisher.test", 5557),
                AddressFilter.specialRangesOnly());
        assertEquals(Code.TARGET_NOT_ADVERTISED, assertInstanceOf(DialResult.Refused.class,
                check.checkAndConnect(DialTarget.of(target("10.9.9.9", 1)))).code());
        assertEquals(Code.TARGET_NOT_ALLOWED, assertInstanceOf(DialResult.Refused.class,
                check.checkAndConnect(DialTarget.of(target("blocked.publisher.test", 5557)))).code());
    }

    @Test
    void aConnectionCarriesTheAdvertisedKeyAndExactlyTheAddressThatPassedTheFilter() throws Exception {
        try (LoopbackListener publisher = LoopbackListener.open("publisher", 8)) {
            int port = publisher.port();
            dns.map("mixed.publisher.test", "169.254.169.254", "127.0.0.1");
            TargetCheck check = checkWith(new MutableView().synced(true).advertise(NS, "mixed.publisher.test", port),
                    Fixtures.filter(List.of("127.0.0.0/8")));
            DialResult.Connected c = assertInstanceOf(DialResult.Connected.class,
                    BackgroundDial.start(check, target("Mixed.Publisher.TEST", port)).await(WAIT));
            try (java.net.Socket socket = c.socket()) {
                assertEquals(PublisherKey.of(NS, "mixed.publisher.test", port), c.key(), "the key as advertised");
                assertEquals(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), c.remote());
                assertEquals(c.remote(), socket.getRemoteSocketAddress(), "the socket is connected to it");
            }
        }
    }
}
