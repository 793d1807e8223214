package io.continuum.broker.relay.api;

import java.net.URI;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;


/**
 * Everything the relay needs to run, already validated by the app's configuration loader (R-CFG). The
 * defaults here are the only ones: the app's field table and the builder both take them from this class (and
 * the dial's from {@code relay.dial}), so a default changes in one place. Tests shrink the deadlines.
 *
 * @param busUrl                 router event bus, {@code https://host[:port]}
 * @param tlsServerName          name checked against the router certificate, null for the URL host
 * @param caCertificates         reads and checks the CA bundle at every session attempt (a rotated bundle
 *                               applies at the next one); null for the system roots
 * @param credential             reads the bearer credential at every session attempt, for the same reason
 * @param clientId               client id declared in {@code hello}
 * @param kubernetesNamespace    namespace declared in {@code hello}
 * @param dynamoNamespaces       Dynamo namespaces declared in {@code hello} and enforced by check 5
 * @param allowedCidrs           optional dial allow-list (R-SEC 9)
 * @param reconnectBackoff       {@code reconnect_backoff}
 * @param drainDeadline          how long SIGTERM lets streams finish
 * @param busConnectTimeout      TCP + TLS + HTTP/2 handshake, and the wait for {@code welcome}
 * @param upstreamConnectTimeout one publisher connect attempt
 * @param timeouts               the fixed per-stage deadlines of R-OPEN and the buffer limits
 */
public record RelayConfig(URI busUrl,
                          String tlsServerName,
                          Callable<List<X509Certificate>> caCertificates,
                          Callable<Credential> credential,
                          String clientId,
                          String kubernetesNamespace,
                          List<String> dynamoNamespaces,
                          List<Cidr> allowedCidrs,
                          ReconnectBackoff reconnectBackoff,
                          Duration drainDeadline,
                          Duration busConnectTimeout,
                          Duration upstreamConnectTimeout,
                          Timeouts timeouts) {
    /** R-CFG {@code drain_deadline}. */
    public static final Duration DEFAULT_DRAIN_DEADLINE = Duration.ofSeconds(25);
    /** R-CFG {@code bus_connect_timeout}. */
    public static final Duration DEFAULT_BUS_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** R-CFG {@code upstream_connect_timeout}: one connect attempt. */
    public static final Duration DEFAULT_UPSTREAM_CONNECT_TIMEOUT = DialDefaults.CONNECT_ATTEMPT_TIMEOUT;
    /**
     * The largest {@code upstream_connect_timeout}: one attempt can never outlast the budget of all attempts
     * (R-OPEN).
     */
    public static final Duration MAX_UPSTREAM_CONNECT_TIMEOUT = DialDefaults.CONNECT_BUDGET;

    /** Checks presence and copies the lists. */
    public RelayConfig {
        Objects.requireNonNull(busUrl, "busUrl");
        Objects.requireNonNull(credential, "credential");
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(kubernetesNamespace, "kubernetesNamespace");
        dynamoNamespaces = List.copyOf(dynamoNamespaces);
        allowedCidrs = List.copyOf(allowedCidrs);
        Objects.requireNonNull(reconnectBackoff, "reconnectBackoff");
        Objects.requireNonNull(drainDeadline, "drainDeadline");
        Objects.requireNonNull(busConnectTimeout, "busConnectTimeout");
        Objects.requireNonNull(upstreamConnectTimeout, "upstreamConnectTimeout");
        Objects.requireNonNull(timeouts, "timeouts");
    }

    /**
     * A builder holding the defaults above; bus URL, credential, client id and Kubernetes namespace have none.
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
     * @param maxConcurrentDials   publisher dials in flight per broker (queued dials keep their deadlines)
     */
    public record Timeouts(Duration dnsResolution, Duration upstreamConnectTotal, Duration streamSlot,
                           Duration responseHead, Duration stableSession, long sessionBufferBytes,
                           int maxConcurrentDials) {
        /** The spec's values. */
        public static final Timeouts SPEC = new Timeouts(DialDefaults.DNS_TIMEOUT,
                DialDefaults.CONNECT_BUDGET, Duration.ofSeconds(5), Duration.ofSeconds(10),
                Duration.ofSeconds(60), 64L * 1024 * 1024, DialDefaults.MAX_CONCURRENT_DIALS);
    }

    /** Builds a {@link RelayConfig}; every setter replaces one component of the record. */
    public static final class Builder {
        private URI busUrl;
        private String tlsServerName;
        private Callable<List<X509Certificate>> caCertificates;
        private Callable<Credential> credential;
        private String clientId;
        private String kubernetesNamespace;
        private List<String> dynamoNamespaces = List.of();
        private List<Cidr> allowedCidrs = List.of();
        private ReconnectBackoff reconnectBackoff = ReconnectBackoff.DEFAULT;
        private Duration drainDeadline = DEFAULT_DRAIN_DEADLINE;
        private Duration busConnectTimeout = DEFAULT_BUS_CONNECT_TIMEOUT;
        private Duration upstreamConnectTimeout = DEFAULT_UPSTREAM_CONNECT_TIMEOUT;
        private Timeouts timeouts = Timeouts.SPEC;

        private Builder() {
        }

        public Builder busUrl(URI v) {
            busUrl = v;
            return this;
        }

        public Builder tlsServerName(String v) {
            tlsServerName = v;
            return this;
        }

        public Builder caCertificates(Callable<List<X509Certificate>> v) {
            caCertificates = v;
            return this;
        }

        public Builder credential(Callable<Credential> v) {
            credential = v;
            return this;
        }

        public Builder clientId(String v) {
            clientId = v;
            return this;
        }

        public Builder kubernetesNamespace(String v) {
            kubernetesNamespace = v;
            return this;
        }

        public Builder dynamoNamespaces(List<String> v) {
            dynamoNamespaces = v;
            return this;
        }

        public Builder allowedCidrs(List<Cidr> v) {
            allowedCidrs = v;
            return this;
        }

        public Builder reconnectBackoff(ReconnectBackoff v) {
            reconnectBackoff = v;
            return this;
        }

        public Builder reconnectBackoff(Duration initial, Duration max) {
            return reconnectBackoff(new ReconnectBackoff(initial, max));
        }

        public Builder drainDeadline(Duration v) {
            drainDeadline = v;
            return this;
        }

        public Builder busConnectTimeout(Duration v) {
            busConnectTimeout = v;
            return this;
        }

        public Builder upstreamConnectTimeout(Duration v) {
            upstreamConnectTimeout = v;
            return this;
        }

        /** Tests only: the spec's deadlines are not configurable. */
        public Builder timeouts(Timeouts v) {
            timeouts = v;
            return this;
        }

        public RelayConfig build() {
            return new RelayConfig(busUrl, tlsServerName, caCertificates, credential, clientId, kubernetesNamespace,
                    dynamoNamespaces, allowedCidrs, reconnectBackoff, drainDeadline, busConnectTimeout,
                    upstreamConnectTimeout, timeouts);
        }
    }
}
