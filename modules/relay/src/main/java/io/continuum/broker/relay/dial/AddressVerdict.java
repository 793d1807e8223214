package io.continuum.broker.relay.dial;

import java.util.Objects;

/**
 * What the {@link AddressFilter} decided for one resolved address. Verdicts are shared constants:
 * producing one never allocates.
 */
public sealed interface AddressVerdict {
    /** The address may be dialed. */
    Allowed ALLOWED = new Allowed();

    /**
     * Whether the address may be dialed.
     *
     * @return true for {@link Allowed}
     */
    boolean allowed();

    /**
     * The address may be dialed.
     */
    record Allowed() implements AddressVerdict {
        @Override
        public boolean allowed() {
            return true;
        }
    }

    /**
     * The address must not be dialed.
     *
     * @param reason short log-safe reason: the special range's name ({@code loopback},
     *               {@code link-local}, {@code unspecified}, {@code multicast}, {@code broadcast},
     *               {@code cloud-metadata}), or {@code outside allowed_cidrs}
     */
    record Rejected(String reason) implements AddressVerdict {
        /** Rejection of an address that no {@code allowed_cidrs} entry contains (R-SEC 9). */
        public static final Rejected OUTSIDE_ALLOWED_CIDRS = new Rejected("outside allowed_cidrs");

        /**
         * Validates.
         */
        public Rejected {
            Objects.requireNonNull(reason, "reason");
        }

        @Override
        public boolean allowed() {
            return false;
        }
    }
}
