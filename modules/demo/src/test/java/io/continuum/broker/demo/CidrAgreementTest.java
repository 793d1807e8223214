package io.continuum.broker.demo;

import java.util.List;
import java.util.Optional;

import io.continuum.broker.relay.dial.AddressFilter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The configuration loader (app) and the address filter (relay) both parse {@code allowed_cidrs};
 * whatever the loader accepts, the filter must accept too, or a config that passes
 * {@code --check-config} would fail at start-up. (It lives in the demo module, which runs on the class
 * path and so sees both modules' internal packages.)
 */
class CidrAgreementTest {
    @ParameterizedTest
    @ValueSource(strings = {"10.244.0.0/16", "10.1.2.3/8", "10.0.0.1", "fd00::/8", "FD00:0::1/128", "::ffff:10.0.0.0/104",
            "127.0.0.0/8", "127.0.0.1/32", "0.0.0.0/0", "::/0", "169.254.0.0/16", "169.254.169.254/32", "::1",
            "64:ff9b::/96", "2002::/16", "100.100.100.200/32"})
    void everyCidrTheConfigAcceptsTheAddressFilterAcceptsToo(String text) {
        Optional<io.continuum.broker.app.config.Cidr> parsed = io.continuum.broker.app.config.Cidr.parse(text);
        if (parsed.isEmpty()) {
            return; // the loader rejects it; nothing reaches the filter
        }
        String normalised = parsed.get().toString();
        AddressFilter filter = assertDoesNotThrow(() -> AddressFilter.of(List.of(normalised)), normalised);
        assertEquals(1, filter.allowedCidrs().size());
    }
}
