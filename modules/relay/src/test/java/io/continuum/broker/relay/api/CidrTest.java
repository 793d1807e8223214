package io.continuum.broker.relay.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import io.continuum.broker.relay.dial.AddressFilter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code allowed_cidrs} entries (R-CFG, R-SEC 8-9): strict parsing, normalisation, membership. The one parser for
 * both the configuration loader and the address filter, so every form docs/configuration.md documents is here.
 */
class CidrTest {

    @ParameterizedTest(name = "{0} normalises to {1}")
    @CsvSource({
            "10.244.0.0/16, 10.244.0.0/16",
            "10.1.2.3/8, 10.0.0.0/8",
            "0.0.0.0/0, 0.0.0.0/0",
            "127.0.0.0/8, 127.0.0.0/8",
            "127.0.0.1/32, 127.0.0.1/32",
            "169.254.0.0/16, 169.254.0.0/16",
            "169.254.169.254/32, 169.254.169.254/32",
            "100.100.100.200/32, 100.100.100.200/32",
            // a bare address is one address
            "10.0.0.1, 10.0.0.1/32",
            "192.168.1.7, 192.168.1.7/32",
            "::1, ::1/128",
            "fd00:ec2::254, fd00:ec2::254/128",
            // IPv6 in RFC 5952 form: lower case, the longest run of zero groups compressed, a single one not
            "fd00:10::/64, fd00:10::/64",
            "FD00:10::1/64, fd00:10::/64",
            "FD00:0::1/128, fd00::1/128",
            "FD00:0:0:0::1/16, fd00::/16",
            "fd00::/8, fd00::/8",
            "::/0, ::/0",
            "::1/128, ::1/128",
            "64:ff9b::/96, 64:ff9b::/96",
            "2002::/16, 2002::/16",
            "2001:db8:0:1:0:0:0:1/128, 2001:db8:0:1::1/128",
            "2001:db8:0:0:1:0:0:1/128, 2001:db8::1:0:0:1/128",
            "2001:0:1:1:1:1:1:1/128, 2001:0:1:1:1:1:1:1/128",
            // R-SEC 9a: IPv4-mapped entries denote IPv4 ranges (the JDK hands such addresses over as IPv4)
            "::ffff:10.0.0.0/104, 10.0.0.0/8",
            "::ffff:127.0.0.1/128, 127.0.0.1/32",
            "::ffff:127.0.0.1, 127.0.0.1/32",
            "::ffff:0.0.0.0/96, 0.0.0.0/0",
            "::ffff:0.0.0.0/80, ::/80",
            "::ffff:0.0.0.0/95, ::fffe:0:0/95",
    })
    void parsesAndNormalises(String text, String normalised) {
        Cidr parsed = Cidr.parse(text);
        assertEquals(normalised, parsed.toString());
        assertEquals(parsed, Cidr.parse(normalised), "the normalised text parses to the same entry");
        assertEquals(List.of(parsed), new AddressFilter(List.of(parsed)).allowedCidrs(),
                "every entry the configuration accepts builds an address filter");
    }

    @ParameterizedTest(name = "\"{0}\" is not a valid allowed_cidrs entry")
    @ValueSource(strings = {
            "", "10.0.0.0/", "/8", "10.0.0.0/33", "::/129", "10.0.0.0/8/8", "10.0.0.0/-1",
            "10.0.0.0/+8", "10.0.0.0/08", "10.0.0.0/ 8", " 10.0.0.0/8", "10.0.0.0/8 ",
            // non-canonical IPv4 spellings are never addresses (R-SEC 9a)
            "010.0.0.0/8", "0x0a.0.0.0/8", "167772160/8", "10.0/16", "10.0.0.0./8", "256.0.0.0/8",
            "example.com/24", "host.example/32", "example.com", "fe80::1%eth0/64", "[::1]/128", "::ffff:0.0.0.0/129",
            "1:2:3:4:5:6:7:8:9/64", "10.0.0/8", "fd00::/129", "010.0.0.0", " 10.0.0.1", "fe80::1%eth0"})
    void rejectsInvalidEntries(String text) {
        Cidr.InvalidCidrException e = assertThrows(Cidr.InvalidCidrException.class, () -> Cidr.parse(text));
        assertTrue(e.getMessage().startsWith("CIDR \"" + text + "\": "), e.getMessage());
        assertTrue(e.getMessage().endsWith(e.reason()), e.getMessage());
    }

    @ParameterizedTest(name = "\"{0}\": {1}")
    @CsvSource(delimiter = '|', value = {
            "10.0.0.0/33 | IPv4 prefix length above 32",
            "::/129 | IPv6 prefix length above 128",
            "10.0.0.0/08 | prefix length must be a decimal number without leading zeros",
            "10.0.0.0/+8 | prefix length must be a decimal number",
            "10.0.0.0/8/8 | more than one '/'",
            "010.0.0.0/8 | not a canonical IPv4 literal",
            "example.com/24 | not an IP address (host names are not allowed)",
            "fe80::1%eth0/64 | IPv6 literal with zone id or brackets",
    })
    void eachErrorNamesTheRuleBroken(String text, String reason) {
        assertEquals(reason, assertThrows(Cidr.InvalidCidrException.class, () -> Cidr.parse(text)).reason());
    }

    @Test
    void aLongEntryIsCutInTheMessage() {
        String text = "1".repeat(300) + "/8";
        Cidr.InvalidCidrException e = assertThrows(Cidr.InvalidCidrException.class, () -> Cidr.parse(text));
        assertTrue(e.getMessage().length() < 120, e.getMessage());
    }

    @Test
    void ipv4MembershipIsByPrefix() {
        Cidr c = Cidr.parse("10.244.0.0/16");
        assertTrue(c.containsIpv4(0x0AF4_0001));
        assertTrue(c.containsIpv4(0x0AF4_FFFF));
        assertFalse(c.containsIpv4(0x0AF5_0000));
        assertFalse(c.containsIpv6(0, 0x0AF4_0001L), "an IPv4 range never contains an IPv6 address");
        assertTrue(Cidr.parse("0.0.0.0/0").containsIpv4(0xFFFF_FFFF));
        assertTrue(Cidr.parse("255.255.255.255/32").containsIpv4(0xFFFF_FFFF));
    }

    @Test
    void ipv6MembershipIsByPrefixAcrossBothHalves() {
        Cidr c = Cidr.parse("fd00::/8");
        assertTrue(c.containsIpv6(0xFD12_0000_0000_0000L, 5));
        assertFalse(c.containsIpv6(0xFC00_0000_0000_0000L, 5));
        Cidr host = Cidr.parse("fd00:ec2::254/128");
        assertTrue(host.containsIpv6(0xFD00_0EC2_0000_0000L, 0x254L));
        assertFalse(host.containsIpv6(0xFD00_0EC2_0000_0000L, 0x255L));
        Cidr half = Cidr.parse("2001:db8::ff00:0/104");
        assertTrue(half.containsIpv6(0x2001_0DB8_0000_0000L, 0xFF12_3456L));
        assertFalse(half.containsIpv6(0x2001_0DB8_0000_0000L, 0xFE12_3456L));
    }

    @Test
    void insideMeansEntirelyInside() {
        Cidr loopback = Cidr.parse("127.0.0.0/8");
        assertTrue(Cidr.parse("127.0.0.0/8").isInside(loopback));
        assertTrue(Cidr.parse("127.0.0.1/32").isInside(loopback));
        assertFalse(Cidr.parse("0.0.0.0/0").isInside(loopback));
        assertFalse(Cidr.parse("126.0.0.0/7").isInside(loopback), "covers loopback but is wider");
        assertFalse(Cidr.parse("::/0").isInside(Cidr.parse("::1/128")));
        assertFalse(Cidr.parse("::ffff:127.0.0.0/80").isInside(loopback), "IPv6 range is another family");
    }
}
