package io.continuum.broker.relay.dial;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/**
 * The shrinkable deadlines default to the spec's values, and the convenience constructors use them.
 */
class SpecDefaultsTest {

    @Test
    void dnsDeadlineIsFiveSeconds_ROPEN() {
        assertEquals(Duration.ofSeconds(5), TargetResolver.DEFAULT_DNS_TIMEOUT);
        assertEquals(Duration.ofSeconds(5), new TargetResolver().dnsTimeout());
    }

    @Test
    void connectAttemptIsFiveSecondsAndAllAttemptsTen_ROPEN_RCFG() {
        assertEquals(Duration.ofSeconds(5), UpstreamDialer.DEFAULT_ATTEMPT_TIMEOUT);
        assertEquals(Duration.ofSeconds(10), UpstreamDialer.DEFAULT_CONNECT_BUDGET);
        UpstreamDialer dialer = new UpstreamDialer(AddressFilter.specialRangesOnly());
        assertEquals(Duration.ofSeconds(5), dialer.attemptTimeout());
        assertEquals(Duration.ofSeconds(10), dialer.connectBudget());
        assertEquals(64, dialer.maxConcurrentDials());
        assertEquals(Duration.ofSeconds(7),
                new UpstreamDialer(AddressFilter.specialRangesOnly(), Duration.ofSeconds(7)).attemptTimeout(),
                "upstream_connect_timeout is configurable");
    }

    @Test
    void refusalLogWindowIsSixtySeconds_RSEC11() {
        assertEquals(Duration.ofSeconds(60), RefusalLog.DEFAULT_WINDOW);
    }

    @Test
    void keepaliveNoticesAVanishedPublisherWithinAMinute() {
        SocketSettings d = SocketSettings.DEFAULTS;
        assertEquals(Duration.ofSeconds(30), d.keepIdle());
        assertEquals(Duration.ofSeconds(10), d.keepInterval());
        assertEquals(3, d.keepCount());
        assertEquals(1 << 20, d.receiveBufferBytes());
    }
}
