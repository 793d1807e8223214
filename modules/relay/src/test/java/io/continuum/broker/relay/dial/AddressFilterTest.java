package io.continuum.broker.relay.dial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The address filter's rules on single resolved addresses (R-SEC 8, 9, 9a). The end-to-end SSRF
 * matrix, with a proof that nothing is dialed, is {@link SsrfMatrixTest}.
 */
class AddressFilterTest {

    private static AddressVerdict check(String allowed, String address) {
        List<String> entries = allowed.isBlank() ? List.of() : Arrays.asList(allowed.split(" "));
        return Fixtures.filter(entries).check(InetAddress.ofLiteral(address));
    }

    private static String reasonOf(AddressVerdict v) {
        return v instanceof AddressVerdict.Rejected r ? r.reason() : "allowed";
    }

    @ParameterizedTest(name = "R-SEC 8/9a: {0} is rejected as {1} without allowed_cidrs")
    @CsvSource({
            "127.0.0.1, loopback",
            "127.255.255.254, loopback",
            "::1, loopback",
            "169.254.1.1, link-local",
            "169.254.169.254, link-local",
            "fe80::1, link-local",
            "febf:ffff::1, link-local",
            "0.0.0.0, unspecified",
            "0.1.2.3, unspecified",
            "::, unspecified",
            "::2, unspecified",
            "224.0.0.1, multicast",
            "239.255.255.250, multicast",
            "ff02::1, multicast",
            "ff0e::1, multicast",
            "255.255.255.255, broadcast",
            "100.100.100.200, cloud-metadata",
            "fd00:ec2::254, cloud-metadata",
            // embedded IPv4, R-SEC 9a
            "::ffff:127.0.0.1, loopback",
            "::ffff:169.254.169.254, link-local",
            "::127.0.0.1, loopback",
            "::169.254.169.254, link-local",
            "64:ff9b::7f00:1, loopback",
            "64:ff9b::a9fe:a9fe, link-local",
            "64:ff9b::6464:64c8, cloud-metadata",
            "2002:7f00:1::, loopback",
            "2002:a9fe:a9fe:1::1, link-local",
            "2002:e000:1::1, multicast",
            "2002:ffff:ffff::, broadcast",
    })
    void specialAddressesAreRejected(String address, String reason) {
        assertEquals(reason, reasonOf(check("", address)));
    }

    @ParameterizedTest(name = "R-SEC 8: {0} is allowed without allowed_cidrs")
    @CsvSource({"10.244.3.7", "192.168.1.1", "100.64.0.1", "100.100.100.201", "fd00::2", "fd00:ec2::253",
            "2001:db8::1", "64:ff9b::a00:1", "2002:af4:307::1", "::ffff:10.244.3.7", "169.253.255.255",
            "169.255.0.0", "223.255.255.255", "255.255.255.254", "fec0::1", "1.0.0.0"})
    void ordinaryAddressesAreAllowed(String address) {
        assertSame(AddressVerdict.ALLOWED, check("", address));
    }

    @ParameterizedTest(name = "R-SEC 8/9: allowed_cidrs [{0}] makes {1} {2}")
    @CsvSource({
            // whole-internet entries never unblock a special range
            "'0.0.0.0/0', 127.0.0.1, loopback",
            "'::/0', ::1, loopback",
            "'0.0.0.0/0 ::/0', 169.254.169.254, link-local",
            "'::/0', ::ffff:127.0.0.1, loopback",
            // an entry entirely inside the special range unblocks what it contains
            "'127.0.0.0/8', 127.0.0.1, allowed",
            "'127.0.0.0/8', 127.9.9.9, allowed",
            "'127.0.0.1/32', 127.0.0.1, allowed",
            "'127.0.0.1/32', 127.0.0.2, loopback",
            "'126.0.0.0/7', 127.0.0.1, loopback",
            "'::1/128', ::1, allowed",
            "'169.254.0.0/16', 169.254.1.1, allowed",
            // 169.254.169.254 is link-local AND cloud-metadata: unblocking link-local is not enough
            "'169.254.0.0/16', 169.254.169.254, cloud-metadata",
            "'169.254.0.0/16 169.254.169.254/32', 169.254.169.254, allowed",
            "'169.254.169.254/32', 169.254.169.254, allowed",
            "'169.254.169.254/32', 169.254.1.1, link-local",
            "'100.64.0.0/10', 100.100.100.200, cloud-metadata",
            "'100.100.100.200/32', 100.100.100.200, allowed",
            "'fd00::/8', fd00:ec2::254, cloud-metadata",
            "'fe80::/64', fe80::1, allowed",
            "'fe80::/64', fe80:1::1, link-local",
            "'224.0.0.0/4', 224.0.0.1, allowed",
            "'224.0.0.0/3', 224.0.0.1, multicast",
            "'255.255.255.255/32', 255.255.255.255, allowed",
            "'0.0.0.0/8', 0.0.0.0, allowed",
            // R-SEC 9: a non-empty list rejects everything outside it
            "'10.0.0.0/8', 10.244.3.7, allowed",
            "'10.0.0.0/8', 192.168.1.1, outside allowed_cidrs",
            "'10.0.0.0/8', fd00::2, outside allowed_cidrs",
            "'fd00::/8', fd00::2, allowed",
            "'fd00::/8', 10.0.0.1, outside allowed_cidrs",
            // R-SEC 9a: embedded IPv4 passes the list if either form is inside an entry
            "'10.0.0.0/8', 64:ff9b::a00:1, allowed",
            "'10.0.0.0/8', 2002:a00:1::1, allowed",
            "'64:ff9b::/96', 64:ff9b::a00:1, allowed",
            "'10.0.0.0/8', ::ffff:10.0.0.1, allowed",
            "'::ffff:10.0.0.0/104', 10.0.0.1, allowed",
            "'10.0.0.0/8', 64:ff9b::c0a8:101, outside allowed_cidrs",
            // ... and is rejected if either form is special, whatever the list says
            "'64:ff9b::/96', 64:ff9b::7f00:1, loopback",
            "'2002::/16', 2002:a9fe:a9fe::1, link-local",
            "'127.0.0.0/8', 64:ff9b::7f00:1, allowed",
            // the JDK reads ::ffff:a.b.c.d as the IPv4 address itself: IPv6-only entries do not cover it
            "'::/0', ::ffff:10.0.0.1, outside allowed_cidrs",
    })
    void allowedCidrs(String allowed, String address, String expected) {
        assertEquals(expected, reasonOf(check(allowed, address)));
    }

    @Test
    void mappedAddressKeptAsIpv6IsJudgedByItsIpv4Form() throws UnknownHostException {
        // A resolver may hand over ::ffff:a.b.c.d as an Inet6Address; it is still that IPv4 address.
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xFF;
        mapped[11] = (byte) 0xFF;
        mapped[12] = (byte) 169;
        mapped[13] = (byte) 254;
        mapped[14] = (byte) 169;
        mapped[15] = (byte) 254;
        InetAddress asIpv6 = Inet6Address.getByAddress(null, mapped, -1);
        assertEquals("link-local", reasonOf(AddressFilter.specialRangesOnly().check(asIpv6)));
        mapped[12] = 10;
        InetAddress ten = Inet6Address.getByAddress(null, mapped, -1);
        assertSame(AddressVerdict.ALLOWED, Fixtures.filter(List.of("10.0.0.0/8")).check(ten));
    }

    @Test
    void scopedLinkLocalIsStillLinkLocal() throws UnknownHostException {
        InetAddress scoped = Inet6Address.getByAddress(null, InetAddress.ofLiteral("fe80::1").getAddress(), 1);
        assertEquals("link-local", reasonOf(AddressFilter.specialRangesOnly().check(scoped)));
    }

    @Test
    void atMost256EntriesAreAccepted_RCFG() {
        List<String> entries = java.util.stream.IntStream.range(0, 257).mapToObj(i -> "10.0." + i / 256 + "." + i % 256
                + "/32").toList();
        Fixtures.filter(entries.subList(0, 256));
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> Fixtures.filter(entries));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("at most 256"), e.getMessage());
    }

    @Test
    void verdictsAreSharedConstants() {
        AddressFilter filter = Fixtures.filter(List.of("10.0.0.0/8"));
        assertSame(filter.checkIpv4(0x7F00_0001), filter.checkIpv4(0x7F00_0002), "no allocation per verdict");
        assertSame(AddressVerdict.Rejected.OUTSIDE_ALLOWED_CIDRS, filter.checkIpv4(0xC0A8_0101));
        assertSame(AddressVerdict.ALLOWED, filter.checkIpv4(0x0A00_0001));
    }
}
