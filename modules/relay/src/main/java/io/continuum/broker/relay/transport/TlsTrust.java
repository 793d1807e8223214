package io.continuum.broker.relay.transport;

import java.util.Objects;

/** The trust anchors used to verify the router's certificate. */
public sealed interface TlsTrust {
    /** The platform's default trust store (system roots). */
    record SystemRoots() implements TlsTrust {
    }

    /**
     * Only the certificates of a PEM bundle (the {@code ca_file}).
     *
     * @param pem the bundle's bytes: one or more {@code CERTIFICATE} blocks
     */
    record CaPem(byte[] pem) implements TlsTrust {
        /** Copies. */
        public CaPem {
            Objects.requireNonNull(pem, "pem");
            pem = pem.clone();
        }

        @Override
        public byte[] pem() {
            return pem.clone();
        }

        @Override
        public String toString() {
            return "CaPem[" + pem.length + " bytes]";
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof CaPem other && java.util.Arrays.equals(pem, other.pem);
        }

        @Override
        public int hashCode() {
            return java.util.Arrays.hashCode(pem);
        }
    }

    /** @return trust in the system roots */
    static TlsTrust systemRoots() {
        return new SystemRoots();
    }

    /**
     * @param pem PEM bundle
     * @return trust in exactly these certificates
     */
    static TlsTrust caPem(byte[] pem) {
        return new CaPem(pem);
    }
}
