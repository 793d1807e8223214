package io.continuum.broker.relay.dial;

import java.net.InetAddress;
import java.util.List;
import java.util.Objects;

/**
 * Outcome of resolving a target host (R-SEC check 5, bus-protocol-v1.md section 5 row 8).
 */
public sealed interface Resolution {
    /**
     * At least one address.
     *
     * @param addresses resolved addresses in resolver order, duplicates removed, never empty
     */
    record Resolved(List<InetAddress> addresses) implements Resolution {
        /**
         * Validates.
         */
        public Resolved {
            addresses = List.copyOf(addresses);
            if (addresses.isEmpty()) {
                throw new IllegalArgumentException("no addresses");
            }
        }
    }

    /**
     * No address in time: answered with {@code upstream_connect_failed}.
     *
     * @param reason short log-safe reason
     */
    record Failed(String reason) implements Resolution {
        /**
         * Validates.
         */
        public Failed {
            Objects.requireNonNull(reason, "reason");
        }
    }
}
