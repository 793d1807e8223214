package io.continuum.broker.metadata;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** What a publisher host may be: R-SEC 9a, dynamo-worker-metadata.md "advertised endpoint". */
class HostTest {
    @ParameterizedTest(name = "{0} is the IP literal {1}")
    @CsvSource({
            "10.244.3.7, 10.244.3.7",
            "0.0.0.0, 0.0.0.0",
            "255.255.255.255, 255.255.255.255",
            "127.0.0.1, 127.0.0.1",
            "fd00::7, fd00:0:0:0:0:0:0:7",
            "FD00:0::7, fd00:0:0:0:0:0:0:7",
            "::1, 0:0:0:0:0:0:0:1",
            "::ffff:10.1.2.3, 10.1.2.3",
            "::10.1.2.3, 0:0:0:0:0:0:a01:203",
            "64:ff9b::7f00:1, 64:ff9b:0:0:0:0:7f00:1",
    })
    void ipLiteralsResolveToThemselvesAndCompareByAddress(String raw, String text) {
        Host host = Host.parse(raw);
        assertInstanceOf(Host.IpLiteral.class, host);
        assertEquals(text, host.text());
    }

    @ParameterizedTest(name = "{0} is the DNS name {1}")
    @CsvSource({
            "worker-0.dynamo.svc.cluster.local, worker-0.dynamo.svc.cluster.local",
            "Worker-0.Dynamo.SVC, worker-0.dynamo.svc",
            "localhost, localhost",
            "a1b2, a1b2",
            "1.2.3.x, 1.2.3.x",
            "0x7f.example, 0x7f.example",
            "_srv.example, _srv.example",
    })
    void dnsNamesAreHeldLowerCase(String raw, String text) {
        Host host = Host.parse(raw);
        assertInstanceOf(Host.DnsName.class, host);
        assertEquals(text, host.text());
    }

    @ParameterizedTest(name = "\"{0}\" is not a host")
    @ValueSource(strings = {
            // R-SEC 9a: non-canonical IPv4 spellings are never valid
            "0177.0.0.1", "0x7f.1", "0x7f000001", "2130706433", "127.1", "10.1", "1.2.3", "1.2.3.4.5",
            "01.2.3.4", "1.2.3.04", "256.1.1.1", "1.2.3.4.", "1.2.3.-4", "0x7F.0.0.1", "example.123",
            "1..2.3", "0",
            // IPv6 literals: no zone ids, no brackets, must parse
            "fe80::1%eth0", "[fd00::7]", "fd00::7::1", "fd00::g", "::ffff:0177.0.0.1", "::ffff:1.2.3",
            // DNS syntax
            "", ".", "a..b", "a b", "host/x", "host:80x", "é.example", "trailing.", ".leading",
            "with*star", "*", "-lead.example", "trail-.example", "host-",
    })
    void malformedHostsAreRejectedWithAReason(String raw) {
        Host.InvalidHostException e = assertThrows(Host.InvalidHostException.class, () -> Host.parse(raw));
        assertEquals(false, e.getMessage().isBlank());
    }

    @org.junit.jupiter.api.Test
    void overlongNamesAndLabelsAreRejected() {
        assertThrows(Host.InvalidHostException.class, () -> Host.parse("a".repeat(64) + ".example"));
        String name253 = ("a".repeat(63) + ".").repeat(3) + "a".repeat(61);
        assertEquals(253, name253.length());
        assertInstanceOf(Host.DnsName.class, Host.parse(name253));
        assertThrows(Host.InvalidHostException.class, () -> Host.parse(name253 + "a"));
    }

    @org.junit.jupiter.api.Test
    void keysCompareDnsNamesCaseInsensitivelyAndIpv6ByAddress() {
        assertEquals(PublisherKey.of("dynamo", "Worker.Example", 5557), PublisherKey.of("dynamo", "worker.example", 5557));
        assertEquals(PublisherKey.of("dynamo", "fd00::7", 5557), PublisherKey.of("dynamo", "fd00:0:0::7", 5557));
        assertEquals("dynamo/[fd00:0:0:0:0:0:0:7]:5557", PublisherKey.of("dynamo", "fd00::7", 5557).toString());
    }
}
