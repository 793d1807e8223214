package io.continuum.broker.relay.transport;

import java.security.cert.X509Certificate;
import java.util.List;

/** The trust anchors used to verify the router's certificate. */
public sealed interface TlsTrust {
    /** The platform's default trust store (system roots). */
    record SystemRoots() implements TlsTrust {
    }

    /**
     * Only these certificates (the {@code ca_file}, parsed and checked once by whoever read it).
     *
     * @param certificates at least one
     */
    record Certificates(List<X509Certificate> certificates) implements TlsTrust {
        /** Copies; an empty list would trust nothing and fail every handshake, so it is refused here. */
        public Certificates {
            certificates = List.copyOf(certificates);
            if (certificates.isEmpty()) {
                throw new IllegalArgumentException("a CA bundle needs at least one certificate");
            }
        }

        @Override
        public String toString() {
            return "Certificates[" + certificates.size() + "]";
        }
    }

    /** @return trust in the system roots */
    static TlsTrust systemRoots() {
        return new SystemRoots();
    }

    /**
     * @param certificates CA certificates
     * @return trust in exactly these certificates
     */
    static TlsTrust certificates(List<X509Certificate> certificates) {
        return new Certificates(certificates);
    }
}
