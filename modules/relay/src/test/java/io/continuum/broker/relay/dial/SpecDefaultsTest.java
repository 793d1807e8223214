package io.continuum.broker.relay.dial;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import io.continuum.broker.relay.api.DialDefaults;

/**
 * The shrinkable deadlines default to the spec's values, and the convenience constructors use them.
 */
class SpecDefaultsTest {

    @Test
    void dnsDeadlineIsFiveSeconds_ROPEN() {
        assertEquals(Duration.ofSeconds(5), DialDefaults.DNS_TIMEOUT);
        assertEquals(Duration.ofSeconds(5), new TargetResolver().dnsTimeout());
    }

    @Test
    void connectAttemptIsFiveSecondsAndAllAttemptsTen_ROPEN_RCFG() {
        assertEquals(Duration.ofSeconds(5), DialDefaults.CONNECT_ATTEMPT_TIMEOUT);
        assertEquals(Duration.ofSeconds(10), DialDefaults.CONNECT_BUDGET);
        assertEquals(64, DialDefaults.MAX_CONCURRENT_DIALS);
        UpstreamDialer dialer = new UpstreamDialer(AddressFilter.specialRangesOnly());
        assertEquals(Duration.ofSeconds(5), dialer.attemptTimeout());
        assertEquals(Duration.ofSeconds(10), dialer.connectBudget());
        assertEquals(64, dialer.maxConcurrentDials());
    }

    @Test
    void refusalLogWindowIsSixtySeconds_RSEC11() {
        assertEquals(Duration.ofSeconds(60), DialDefaults.REFUSAL_LOG_WINDOW);
    }

    @Test
    void atMost32LookupsAreInFlight() {
        assertEquals(32, DialDefaults.MAX_CONCURRENT_LOOKUPS);
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
