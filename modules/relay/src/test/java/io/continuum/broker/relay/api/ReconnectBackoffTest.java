package io.continuum.broker.relay.api;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@code reconnect_backoff}: one type for the configuration and the relay (R-BEH 6). */
class ReconnectBackoffTest {
    @Test
    void theDefaultsAreTheSpecsAndTheBuilderUsesThem() {
        assertEquals(new ReconnectBackoff(Duration.ofSeconds(1), Duration.ofSeconds(60)), ReconnectBackoff.DEFAULT);
        assertEquals(ReconnectBackoff.DEFAULT, RelayConfig.builder().busUrl(java.net.URI.create("https://r"))
                .credential(() -> null).clientId("c").kubernetesNamespace("k").build().reconnectBackoff());
    }

    @Test
    void aRangeDelaysCannotBeDrawnFromIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new ReconnectBackoff(Duration.ZERO, Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class,
                () -> new ReconnectBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)));
    }
}
