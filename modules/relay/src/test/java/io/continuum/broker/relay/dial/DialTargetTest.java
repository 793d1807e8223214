package io.continuum.broker.relay.dial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.continuum.broker.metadata.Host;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.protocol.Target;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Row 4 (bus-protocol-v1.md section 5): a target is read once into the key the view is asked about and the host
 * that is dialed, or into the reason it is not served.
 */
class DialTargetTest {
    @Test
    void aZmqTargetBecomesItsNormalisedKeyAndParsedHost() {
        DialTarget.Publisher p = assertInstanceOf(DialTarget.Publisher.class,
                DialTarget.of(new Target.ZmqTcp("dynamo", "Worker-1.Example", 5557)));
        assertEquals(PublisherKey.of("dynamo", "worker-1.example", 5557), p.key());
        assertEquals(new Host.DnsName("worker-1.example"), p.host());

        DialTarget.Publisher v6 = assertInstanceOf(DialTarget.Publisher.class,
                DialTarget.of(new Target.ZmqTcp("dynamo", "FD00:0::1", 1)));
        assertEquals(PublisherKey.of("dynamo", "fd00::1", 1), v6.key(), "IPv6 literals compare by address");
        assertInstanceOf(Host.IpLiteral.class, v6.host());
    }

    @ParameterizedTest(name = "{0} {1}:{2} is unsupported: {3}")
    @CsvSource(delimiter = '|', nullValues = "null", value = {
            "dynamo | 127.1 | 5557 | invalid host: not a canonical IPv4 literal",
            "dynamo | fe80::1%eth0 | 5557 | invalid host: IPv6 literal with zone id or brackets",
            "dynamo | 10.0.0.1 | 0 | port out of range 1..65535",
            "dynamo | 10.0.0.1 | 65536 | port out of range 1..65535",
            "'' | 10.0.0.1 | 5557 | missing namespace",
            "null | 10.0.0.1 | 5557 | missing namespace",
    })
    void aMalformedZmqTargetIsUnsupported(String namespace, String host, int port, String reason) {
        assertEquals(new DialTarget.Unsupported(reason), DialTarget.of(new Target.ZmqTcp(namespace, host, port)));
    }

    @Test
    void otherKindsAndNoTargetAreUnsupported() {
        assertEquals(new DialTarget.Unsupported("missing target"), DialTarget.of(null));
        assertEquals(new DialTarget.Unsupported("unsupported target: unknown kind"),
                DialTarget.of(new Target.Unsupported("x", "unknown kind")));
        assertEquals(new DialTarget.Unsupported("unsupported target"),
                DialTarget.of(new Target.Unsupported("x", null)));
        assertEquals(new DialTarget.Unsupported("announced_source targets are not served by the broker"),
                DialTarget.of(new Target.AnnouncedSource("s-1")));
    }
}
