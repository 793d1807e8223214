package io.continuum.broker.relay;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;

import io.continuum.broker.relay.net.Cidr;

/**
 * Everything the relay needs to run, already validated by the app's configuration loader
 * (R-CFG). Deadlines default to the spec values (R-OPEN, bus-protocol-v1.md); tests shrink them.
 *
 * @param busUrl                 router event bus, {@code https://host[:port]}
 * @param tlsServerName          name checked against the router certificate, null for the URL host
 * @param caBundle               reads the CA PEM bundle at every session attempt; null for system roots
 * @param credential             reads the bearer credential at every session attempt (never logged)
 * @param clientId               client id declared in {@code hello}
 * @param kubernetesNamespace    namespace declared in {@code hello}
 * @param dynamoNamespaces       Dynamo namespaces declared in {@code hello} and enforced by check 5
 * @param allowedCidrs           optional dial allow-list (R-SEC 9)
 * @param backoffInitial         {@code reconnect_backoff.initial}
 * @param backoffMax             {@code reconnect_backoff.max}
 * @param drainDeadline          how long SIGTERM lets streams finish
 * @param busConnectTimeout      TCP + TLS + HTTP/2 handshake, and the wait for {@code welcome}
 * @param upstreamConnectTimeout one publisher connect attempt
 * @param timeouts               the fixed per-stage deadlines of R-OPEN and the buffer limits
 */
public record RelayConfig(URI busUrl,
                          String tlsServerName,
                          Callable<byte[]> caBundle,
                          Callable<String> credential,
                          String clientId,
                          String kubernetesNamespace,
                          List<String> dynamoNamespaces,
                          List<Cidr> allowedCidrs,
                          Duration backoffInitial,
                          Duration backoffMax,
                          Duration drainDeadline,
                          Duration busConnectTimeout,
                          Duration upstreamConnectTimeout,
                          Timeouts timeouts) {
    /**
     * Validates and copies.
     */
    public RelayConfig {
        Objects.requireNonNull(busUrl, "busUrl");
        Objects.requireNonNull(credential, "credential");
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(kubernetesNamespace, "kubernetesNamespace");
        dynamoNamespaces = List.copyOf(dynamoNamespaces);
        allowedCidrs = List.copyOf(allowedCidrs);
        Objects.requireNonNull(backoffInitial, "backoffInitial");
        Objects.requireNonNull(backoffMax, "backoffMax");
        Objects.requireNonNull(drainDeadline, "drainDeadline");
        Objects.requireNonNull(busConnectTimeout, "busConnectTimeout");
        Objects.requireNonNull(upstreamConnectTimeout, "upstreamConnectTimeout");
        Objects.requireNonNull(timeouts, "timeouts");
    }

    /**
     * A builder with the R-CFG defaults.
     *
     * @return builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String toString() {
        return "RelayConfig[busUrl=" + busUrl + ", clientId=" + clientId + ", kubernetesNamespace="
                + kubernetesNamespace + ", dynamoNamespaces=" + dynamoNamespaces + ", allowedCidrs=" + allowedCidrs
                + ", credential=<redacted>]";
    }

    /**
     * Deadlines and limits fixed by the spec; constructor parameters only so tests can shrink them.
     *
     * @param dnsResolution        R-OPEN: DNS resolution, 5 s
     * @param upstreamConnectTotal R-OPEN: all connect attempts together, 10 s
     * @param streamSlot           R-OPEN: a free HTTP/2 stream slot, 5 s
     * @param responseHead         R-OPEN: the router's response head for a data stream, 10 s
     * @param stableSession        section 4: a session welcomed this long resets the backoff, 60 s
     * @param sessionBufferBytes   R-BUF 2: all streams of a session, 64 MiB
     * @param maxConcurrentDials   publisher dials in flight per session (queued dials keep their deadlines)
     */
    public record Timeouts(Duration dnsResolution, Duration upstreamConnectTotal, Duration streamSlot,
                           Duration responseHead, Duration stableSession, long sessionBufferBytes,
                           int maxConcurrentDials) {
        /** The spec's values. */
        public static final Timeouts SPEC = new Timeouts(Duration.ofSeconds(5), Duration.ofSeconds(10),
                Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(60), 64L * 1024 * 1024, 64);
    }

    /**
     * Builder of {@link RelayConfig}.
     */
    public static final class Builder {
        private URI busUrl;
        private String tlsServerName;
        private Callable<byte[]> caBundle;
        private Callable<String> credential;
        private String clientId;
        private String kubernetesNamespace;
        private List<String> dynamoNamespaces = List.of();
        private List<Cidr> allowedCidrs = List.of();
        private Duration backoffInitial = Duration.ofSeconds(1);
        private Duration backoffMax = Duration.ofSeconds(60);
        private Duration drainDeadline = Duration.ofSeconds(25);
        private Duration busConnectTimeout = Duration.ofSeconds(10);
        private Duration upstreamConnectTimeout = Duration.ofSeconds(5);
        private Timeouts timeouts = Timeouts.SPEC;

        private Builder() {
        }

        /** @param v bus URL @return this */
        public Builder busUrl(URI v) {
            busUrl = v;
            return this;
        }

        /** @param v TLS server name or null @return this */
        public Builder tlsServerName(String v) {
            tlsServerName = v;
            return this;
        }

        /** @param v CA bundle reader, or null for system roots @return this */
        public Builder caBundle(Callable<byte[]> v) {
            caBundle = v;
            return this;
        }

        /** @param v credential reader @return this */
        public Builder credential(Callable<String> v) {
            credential = v;
            return this;
        }

        /** @param v client id @return this */
        public Builder clientId(String v) {
            clientId = v;
            return this;
        }

        /** @param v Kubernetes namespace @return this */
        public Builder kubernetesNamespace(String v) {
            kubernetesNamespace = v;
            return this;
        }

        /** @param v Dynamo namespaces @return this */
        public Builder dynamoNamespaces(List<String> v) {
            dynamoNamespaces = v;
            return this;
        }

        /** @param v allowed CIDRs @return this */
        public Builder allowedCidrs(List<Cidr> v) {
            allowedCidrs = v;
            return this;
        }

        /** @param initial first delay @param max largest delay @return this */
        public Builder reconnectBackoff(Duration initial, Duration max) {
            backoffInitial = initial;
            backoffMax = max;
            return this;
        }

        /** @param v drain deadline @return this */
        public Builder drainDeadline(Duration v) {
            drainDeadline = v;
            return this;
        }

        /** @param v bus connect timeout @return this */
        public Builder busConnectTimeout(Duration v) {
            busConnectTimeout = v;
            return this;
        }

        /** @param v one upstream connect attempt @return this */
        public Builder upstreamConnectTimeout(Duration v) {
            upstreamConnectTimeout = v;
            return this;
        }

        /** @param v spec deadlines (tests only) @return this */
        public Builder timeouts(Timeouts v) {
            timeouts = v;
            return this;
        }

        /** @return the config */
        public RelayConfig build() {
            return new RelayConfig(busUrl, tlsServerName, caBundle, credential, clientId, kubernetesNamespace,
                    dynamoNamespaces, allowedCidrs, backoffInitial, backoffMax, drainDeadline, busConnectTimeout,
                    upstreamConnectTimeout, timeouts);
        }
    }
}
