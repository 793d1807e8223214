package io.continuum.broker.relay.dial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.continuum.broker.relay.MutableView;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Target;

/**
 * The SSRF matrix (R-SEC 5-9a, bus-protocol-v1.md section 5 rows 4 and 8-10): every target a
 * compromised router might use to make the broker probe the cluster, with the code the broker
 * answers and proof that a refused target caused no TCP connection at all.
 * <p>
 * Every target is advertised (so the refusal comes from the host syntax or the address filter)
 * and carries the port of a wildcard listener on this host that records accepts. Positive cases
 * use loopback made dialable by an {@code allowed_cidrs} entry inside 127.0.0.0/8 or ::1/128.
 * Two witnesses per case: the connect step records every address it was asked to dial (any
 * host), and the listener reports every connection it accepted (this host).
 */
class SsrfMatrixTest {
    private static final String NS = "dynamo";
    private static final Object CONNECTED = "connected";

    @RegisterExtension
    static final AcceptRecorder.PerClass listener = new AcceptRecorder.PerClass();

    private static TableResolver dns() {
        try {
            byte[] mapped = new byte[16];
            mapped[10] = (byte) 0xFF;
            mapped[11] = (byte) 0xFF;
            mapped[12] = 127;
            mapped[15] = 1;
            InetAddress mappedKeptAsIpv6 = Inet6Address.getByAddress(null, mapped, -1);
            return new TableResolver()
                    .map("loopback.publisher.test", "127.0.0.1")
                    .map("v6-loopback.publisher.test", "::1")
                    .map("metadata.publisher.test", "169.254.169.254")
                    .map("alibaba-metadata.publisher.test", "100.100.100.200")
                    .map("aws-v6-metadata.publisher.test", "fd00:ec2::254")
                    .map("mapped.publisher.test", List.of(mappedKeptAsIpv6))
                    .map("nat64-loopback.publisher.test", "64:ff9b::7f00:1")
                    .map("all-blocked.publisher.test", "169.254.169.254", "::1", "127.0.0.1", "0.0.0.0", "fe80::1")
                    .map("mixed.publisher.test", "169.254.169.254", "::1", "192.0.2.1", "127.0.0.1")
                    .map("mixed-none-allowed.publisher.test", "169.254.169.254", "127.0.0.2", "::1")
                    .map("loopback-2.publisher.test", "127.0.0.2")
                    .map("unspecified.publisher.test", "0.0.0.0")
                    .map("compatible.publisher.test", "::7f00:1");
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    static Stream<Arguments> matrix() {
        return Stream.of(
                // R-SEC 8: special IPv4 and IPv6 addresses, no allowed_cidrs
                refused("IPv4 loopback", "", "127.0.0.1", Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("IPv4 loopback, other address of 127/8", "", "127.0.0.2", Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("IPv6 loopback", "", "::1", Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("IPv4 link-local", "", "169.254.1.1", Code.TARGET_NOT_ALLOWED, "link-local"),
                refused("cloud metadata 169.254.169.254", "", "169.254.169.254", Code.TARGET_NOT_ALLOWED, "link-local"),
                refused("IPv6 link-local", "", "fe80::1", Code.TARGET_NOT_ALLOWED, "link-local"),
                refused("AWS IPv6 metadata (R-SEC 9a)", "", "fd00:ec2::254", Code.TARGET_NOT_ALLOWED, "cloud-metadata"),
                refused("Alibaba metadata (R-SEC 9a)", "", "100.100.100.200", Code.TARGET_NOT_ALLOWED, "cloud-metadata"),
                refused("IPv4 unspecified", "", "0.0.0.0", Code.TARGET_NOT_ALLOWED, "unspecified"),
                refused("IPv6 unspecified", "", "::", Code.TARGET_NOT_ALLOWED, "unspecified"),
                refused("IPv4 multicast", "", "224.0.0.1", Code.TARGET_NOT_ALLOWED, "multicast"),
                refused("IPv6 multicast", "", "ff02::1", Code.TARGET_NOT_ALLOWED, "multicast"),
                refused("broadcast (R-SEC 9a)", "", "255.255.255.255", Code.TARGET_NOT_ALLOWED, "broadcast"),
                // R-SEC 9a: IPv6 forms that embed a blocked IPv4 address
                refused("IPv4-mapped loopback", "", "::ffff:127.0.0.1", Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("IPv4-mapped metadata", "", "::ffff:169.254.169.254", Code.TARGET_NOT_ALLOWED, "link-local"),
                refused("IPv4-compatible loopback", "", "::127.0.0.1", Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("IPv4-compatible metadata", "", "::169.254.169.254", Code.TARGET_NOT_ALLOWED, "link-local"),
                refused("NAT64 loopback", "", "64:ff9b::7f00:1", Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("NAT64 metadata", "", "64:ff9b::a9fe:a9fe", Code.TARGET_NOT_ALLOWED, "link-local"),
                refused("6to4 loopback", "", "2002:7f00:1::", Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("6to4 metadata", "", "2002:a9fe:a9fe::1", Code.TARGET_NOT_ALLOWED, "link-local"),
                refused("NAT64 loopback even with 64:ff9b::/96 allowed", "64:ff9b::/96", "64:ff9b::7f00:1",
                        Code.TARGET_NOT_ALLOWED, "loopback"),
                // R-SEC 9a: spellings inet_aton reads as loopback are not hosts at all (row 4)
                refused("decimal IPv4", "127.0.0.0/8", "2130706433", Code.UNSUPPORTED_TARGET, "invalid host"),
                refused("octal IPv4", "127.0.0.0/8", "0177.0.0.1", Code.UNSUPPORTED_TARGET, "invalid host"),
                refused("hex IPv4, two parts", "127.0.0.0/8", "0x7f.1", Code.UNSUPPORTED_TARGET, "invalid host"),
                refused("hex IPv4, one part", "127.0.0.0/8", "0x7f000001", Code.UNSUPPORTED_TARGET, "invalid host"),
                refused("IPv4, two parts", "127.0.0.0/8", "127.1", Code.UNSUPPORTED_TARGET, "invalid host"),
                refused("IPv4 with trailing dot", "127.0.0.0/8", "127.0.0.1.", Code.UNSUPPORTED_TARGET, "invalid host"),
                refused("IPv4 with leading zero", "127.0.0.0/8", "127.0.0.01", Code.UNSUPPORTED_TARGET, "invalid host"),
                refused("IPv6 in brackets", "::1/128", "[::1]", Code.UNSUPPORTED_TARGET, "invalid host"),
                refused("IPv6 with zone id", "fe80::/10", "fe80::1%1", Code.UNSUPPORTED_TARGET, "invalid host"),
                refused("empty host", "", "", Code.UNSUPPORTED_TARGET, "invalid host"),
                // the same special addresses in other spellings
                refused("IPv6 loopback, uncompressed", "", "0:0:0:0:0:0:0:1", Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("IPv4-mapped loopback, hex", "", "::ffff:7f00:1", Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("IPv4-compatible loopback, hex", "", "::7f00:1", Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("IPv4-mapped unspecified", "", "::ffff:0.0.0.0", Code.TARGET_NOT_ALLOWED, "unspecified"),
                refused("IPv4-mapped broadcast", "", "::ffff:255.255.255.255", Code.TARGET_NOT_ALLOWED, "broadcast"),
                refused("IPv4-mapped multicast", "", "::ffff:239.1.2.3", Code.TARGET_NOT_ALLOWED, "multicast"),
                refused("IPv4 multicast, top of the range", "", "239.255.255.255", Code.TARGET_NOT_ALLOWED, "multicast"),
                refused("IPv4 link-local, top of the range", "", "169.254.255.255", Code.TARGET_NOT_ALLOWED,
                        "link-local"),
                refused("IPv6 link-local, other address of fe80::/10", "", "febf::1", Code.TARGET_NOT_ALLOWED,
                        "link-local"),
                refused("hex IPv4, four parts", "127.0.0.0/8", "0x7f.0x0.0x0.0x1", Code.UNSUPPORTED_TARGET,
                        "invalid host"),
                refused("octal IPv4, four padded parts", "127.0.0.0/8", "0177.0000.0000.0001", Code.UNSUPPORTED_TARGET,
                        "invalid host"),
                refused("decimal IPv4 beyond 32 bits", "127.0.0.0/8", "4294967297", Code.UNSUPPORTED_TARGET,
                        "invalid host"),
                // row 4: ports
                refusedPort("port 0", 0),
                refusedPort("port 65536", 65536),
                refusedPort("port -1", -1),
                refusedPort("port 70000", 70000),
                // R-SEC 7: DNS answers are filtered like literals
                refused("DNS name resolving to loopback", "", "loopback.publisher.test", Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("DNS name resolving to IPv6 loopback", "", "v6-loopback.publisher.test", Code.TARGET_NOT_ALLOWED,
                        "loopback"),
                refused("DNS name resolving to metadata", "", "metadata.publisher.test", Code.TARGET_NOT_ALLOWED,
                        "link-local"),
                refused("DNS name resolving to 100.100.100.200", "", "alibaba-metadata.publisher.test",
                        Code.TARGET_NOT_ALLOWED, "cloud-metadata"),
                refused("DNS name resolving to fd00:ec2::254", "", "aws-v6-metadata.publisher.test",
                        Code.TARGET_NOT_ALLOWED, "cloud-metadata"),
                refused("DNS answer ::ffff:127.0.0.1 kept as IPv6", "", "mapped.publisher.test", Code.TARGET_NOT_ALLOWED,
                        "loopback"),
                refused("DNS answer NAT64 loopback", "", "nat64-loopback.publisher.test", Code.TARGET_NOT_ALLOWED,
                        "loopback"),
                refused("DNS name resolving only to blocked addresses", "", "all-blocked.publisher.test",
                        Code.TARGET_NOT_ALLOWED, "link-local, loopback, unspecified"),
                refused("DNS name resolving to 0.0.0.0", "", "unspecified.publisher.test", Code.TARGET_NOT_ALLOWED,
                        "unspecified"),
                refused("DNS answer IPv4-compatible ::7f00:1", "", "compatible.publisher.test", Code.TARGET_NOT_ALLOWED,
                        "loopback"),
                refused("DNS name to a mix, none of it allowed", "127.0.0.1/32", "mixed-none-allowed.publisher.test",
                        Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("127.0.0.1/32 does not unblock a DNS name resolving to 127.0.0.2", "127.0.0.1/32",
                        "loopback-2.publisher.test", Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("DNS name that does not resolve", "", "nowhere.publisher.test", Code.UPSTREAM_CONNECT_FAILED,
                        "DNS"),
                // R-SEC 8: allowed_cidrs edge cases
                refused("0.0.0.0/0 does not unblock loopback", "0.0.0.0/0 ::/0", "127.0.0.1", Code.TARGET_NOT_ALLOWED,
                        "loopback"),
                refused("::/0 does not unblock IPv6 loopback", "0.0.0.0/0 ::/0", "::1", Code.TARGET_NOT_ALLOWED,
                        "loopback"),
                refused("::/0 does not unblock IPv4-mapped loopback", "::/0", "::ffff:127.0.0.1",
                        Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("0.0.0.0/0 does not unblock 0.0.0.0", "0.0.0.0/0 ::/0", "0.0.0.0", Code.TARGET_NOT_ALLOWED,
                        "unspecified"),
                refused("::/0 does not unblock ::", "0.0.0.0/0 ::/0", "::", Code.TARGET_NOT_ALLOWED, "unspecified"),
                refused("0.0.0.0/0 does not unblock the metadata address", "0.0.0.0/0 ::/0", "169.254.169.254",
                        Code.TARGET_NOT_ALLOWED, "link-local"),
                refused("0.0.0.0/0 does not unblock multicast", "0.0.0.0/0", "224.0.0.1", Code.TARGET_NOT_ALLOWED,
                        "multicast"),
                refused("0.0.0.0/0 does not unblock broadcast", "0.0.0.0/0", "255.255.255.255", Code.TARGET_NOT_ALLOWED,
                        "broadcast"),
                refused("::/0 does not unblock fd00:ec2::254", "::/0", "fd00:ec2::254", Code.TARGET_NOT_ALLOWED,
                        "cloud-metadata"),
                refused("::/0 does not unblock IPv6 link-local", "::/0", "fe80::1", Code.TARGET_NOT_ALLOWED,
                        "link-local"),
                refused("169.254.0.0/16 does not unblock loopback", "169.254.0.0/16", "127.0.0.1",
                        Code.TARGET_NOT_ALLOWED, "loopback"),
                refused("127.0.0.1/32 does not unblock 127.0.0.2", "127.0.0.1/32", "127.0.0.2", Code.TARGET_NOT_ALLOWED,
                        "loopback"),
                refused("169.254.0.0/16 does not unblock the metadata address", "169.254.0.0/16", "169.254.169.254",
                        Code.TARGET_NOT_ALLOWED, "cloud-metadata"),
                refused("an entry elsewhere does not unblock loopback", "10.0.0.0/8", "127.0.0.1", Code.TARGET_NOT_ALLOWED,
                        "loopback"),
                // R-SEC 9: outside a non-empty allowed_cidrs
                refused("outside allowed_cidrs", "127.0.0.0/8", "192.0.2.1", Code.TARGET_NOT_ALLOWED,
                        "outside allowed_cidrs"),
                refused("IPv6 outside an IPv4-only allowed_cidrs", "127.0.0.0/8", "2001:db8::1", Code.TARGET_NOT_ALLOWED,
                        "outside allowed_cidrs"),
                // positive cases: dialed, and only the allowed address
                connected("127.0.0.0/8 unblocks 127.0.0.1", "127.0.0.0/8", "127.0.0.1", "127.0.0.1"),
                connected("127.0.0.0/8 unblocks 127.0.0.2", "127.0.0.0/8", "127.0.0.2", "127.0.0.2"),
                connected("127.0.0.1/32 unblocks 127.0.0.1", "127.0.0.1/32", "127.0.0.1", "127.0.0.1"),
                connected("::1/128 unblocks ::1", "::1/128", "::1", "::1"),
                connected("IPv4-mapped literal dials the IPv4 address", "127.0.0.0/8", "::ffff:127.0.0.1", "127.0.0.1"),
                connected("DNS name to an unblocked address", "127.0.0.0/8", "loopback.publisher.test", "127.0.0.1"),
                connected("DNS name to a mix: only the allowed address is dialed", "127.0.0.0/8", "mixed.publisher.test",
                        "127.0.0.1"));
    }

    /**
     * Rows 5-7 (R-SEC checks 2-4): targets the address filter would let through (loopback is allowed here) but
     * that are not advertised for a covered namespace. Refused with {@code target_not_advertised}, nothing dialed.
     */
    static Stream<Arguments> notAdvertised() {
        return Stream.of(
                Arguments.of("namespace not covered, advertised there", "other-namespace", "other-namespace",
                        "127.0.0.1", "127.0.0.1", 0, true),
                Arguments.of("covered namespace, advertised only in another", NS, "dynamo-canary", "127.0.0.1",
                        "127.0.0.1", 0, true),
                Arguments.of("advertised host, another port", NS, NS, "127.0.0.1", "127.0.0.1", 1, true),
                Arguments.of("advertised name, subscribed by its address", NS, NS, "loopback.publisher.test",
                        "127.0.0.1", 0, true),
                Arguments.of("view not synced yet", NS, NS, "127.0.0.1", "127.0.0.1", 0, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("notAdvertised")
    void notAdvertisedTargetsAreNeverDialed(String name, String targetNamespace, String advertisedNamespace,
                                            String advertisedHost, String targetHost, int portOffset, boolean synced)
            throws Exception {
        RecordingConnector connector = new RecordingConnector();
        MutableView view = new MutableView().synced(synced).advertise(advertisedNamespace, advertisedHost, listener.port());
        TargetCheck check = new TargetCheck(Set.of(NS, "dynamo-canary"), view,
                new TargetResolver(dns(), Duration.ofSeconds(5)),
                new UpstreamDialer(Fixtures.filter(List.of("127.0.0.0/8", "::1/128")), Duration.ofSeconds(5),
                        Duration.ofSeconds(10), 4, SocketSettings.DEFAULTS, connector));

        int port = listener.port() + portOffset > 65535 ? listener.port() - 1 : listener.port() + portOffset;
        DialResult outcome = BackgroundDial.start(check, new Target.ZmqTcp(targetNamespace, targetHost, port))
                .await(Duration.ofSeconds(30));

        DialResult.Refused refusal = assertInstanceOf(DialResult.Refused.class, outcome);
        assertEquals(Code.TARGET_NOT_ADVERTISED, refusal.code(), refusal.reason());
        assertEquals(List.of(), connector.attempts, "no TCP connect attempted to any address");
        assertEquals(List.of(), listener.acceptedBeforeSentinel(), "no connection reached this host");
    }

    private static Arguments refused(String name, String allowed, String host, Code code, String reason) {
        return Arguments.of(name, allowed, host, 5557, code, reason, null);
    }

    private static Arguments refusedPort(String name, int port) {
        return Arguments.of(name, "127.0.0.0/8", "127.0.0.1", port, Code.UNSUPPORTED_TARGET, "port", null);
    }

    private static Arguments connected(String name, String allowed, String host, String dialed) {
        return Arguments.of(name, allowed, host, 5557, null, null, dialed);
    }

    @ParameterizedTest(name = "{0}: {2} with allowed_cidrs [{1}]")
    @MethodSource("matrix")
    void target(String name, String allowed, String host, int port, Code code, String reason, String dialed)
            throws Exception {
        // Every well-formed target gets the recorder's port, so a wrong dial to this host is caught.
        int targetPort = port == 5557 ? listener.port() : port;
        RecordingConnector connector = new RecordingConnector();
        AddressFilter filter = Fixtures.filter(allowed.isBlank() ? List.of() : List.of(allowed.split(" ")));
        MutableView view = new MutableView().synced(true);
        try {
            view.advertise(NS, host, targetPort);
        } catch (IllegalArgumentException notAKey) {
            // invalid host or port: nothing can advertise it
        }
        TargetCheck check = new TargetCheck(Set.of(NS), view,
                new TargetResolver(dns(), Duration.ofSeconds(5)),
                new UpstreamDialer(filter, Duration.ofSeconds(5), Duration.ofSeconds(10), 4,
                        SocketSettings.DEFAULTS, connector));

        DialResult outcome = BackgroundDial.start(check, new Target.ZmqTcp(NS, host, targetPort))
                .await(Duration.ofSeconds(30));

        List<Socket> accepted = listener.acceptedBeforeSentinel();
        if (code != null) {
            DialResult.Refused refusal = assertInstanceOf(DialResult.Refused.class, outcome);
            assertEquals(code, refusal.code(), refusal.reason());
            assertTrue(refusal.reason().contains(reason), "reason \"" + refusal.reason() + "\" names " + reason);
            assertEquals(List.of(), connector.attempts, "no TCP connect attempted to any address");
            assertEquals(List.of(), accepted, "no connection reached this host");
        } else {
            DialResult.Connected connection = assertInstanceOf(DialResult.Connected.class, outcome);
            try (Socket socket = connection.socket()) {
                InetSocketAddress expected = new InetSocketAddress(InetAddress.ofLiteral(dialed), targetPort);
                assertEquals(expected, connection.remote());
                assertEquals(List.of(expected), connector.attempts, "exactly the allowed address was dialed, once");
                assertEquals(1, accepted.size(), "the broker's one connection");
                assertEquals(socket.getLocalPort(), accepted.getFirst().getPort());
            }
        }
    }
}
