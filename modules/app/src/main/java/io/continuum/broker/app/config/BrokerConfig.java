package io.continuum.broker.app.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The validated, immutable broker configuration (R-CFG); every default already applied. Built only
 * by {@link ConfigLoader}. Holds where the credential lives, never the credential.
 *
 * @param busUrl                 router event bus, always https
 * @param caFile                 CA bundle verifying the router; empty means the system roots
 * @param tlsServerName          name checked against the router certificate (default: the URL host)
 * @param clientId               client id the router binds the credential to
 * @param credential             where the bearer credential is read from
 * @param kubernetesNamespace    namespace declared in {@code hello}
 * @param dynamoNamespaces       Dynamo namespaces declared in {@code hello} (1..64, no duplicates)
 * @param watchNamespaces        namespaces where {@code DynamoWorkerMetadata} is watched (1..32)
 * @param allowedCidrs           optional dial allow-list (0..256), normalised
 * @param metricsListen          address of {@code /metrics}, {@code /healthz}, {@code /readyz}, {@code /statusz}
 * @param reconnectBackoff       reconnect delay range
 * @param drainDeadline          how long a shutdown lets streams finish (at most 10m)
 * @param upstreamConnectTimeout one publisher connect attempt (at most 10s)
 * @param busConnectTimeout      TCP + TLS + HTTP/2 handshake to the bus, and the wait for {@code welcome}
 * @param logFormat              log line format (addition beyond R-CFG)
 */
public record BrokerConfig(BusUrl busUrl,
                           Optional<Path> caFile,
                           String tlsServerName,
                           String clientId,
                           CredentialLocation credential,
                           String kubernetesNamespace,
                           List<String> dynamoNamespaces,
                           List<String> watchNamespaces,
                           List<Cidr> allowedCidrs,
                           ListenAddress metricsListen,
                           ReconnectBackoff reconnectBackoff,
                           Duration drainDeadline,
                           Duration upstreamConnectTimeout,
                           Duration busConnectTimeout,
                           LogFormat logFormat) {

    /** Default path of the configuration file. */
    public static final Path DEFAULT_PATH = Path.of("/etc/continuum-event-broker/config.yaml");
    /** Default {@code metrics_listen}. */
    public static final String DEFAULT_METRICS_LISTEN = "0.0.0.0:9464";
    /** Default {@code drain_deadline}. */
    public static final Duration DEFAULT_DRAIN_DEADLINE = Duration.ofSeconds(25);
    /** Largest {@code drain_deadline}. */
    public static final Duration MAX_DRAIN_DEADLINE = Duration.ofMinutes(10);
    /** Default {@code upstream_connect_timeout}. */
    public static final Duration DEFAULT_UPSTREAM_CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** Largest {@code upstream_connect_timeout}: all attempts together are bounded by 10 s (R-OPEN). */
    public static final Duration MAX_UPSTREAM_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** Default {@code bus_connect_timeout}. */
    public static final Duration DEFAULT_BUS_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** Most entries in {@code dynamo_namespaces}. */
    public static final int MAX_DYNAMO_NAMESPACES = 64;
    /** Most entries in {@code watch_namespaces}. */
    public static final int MAX_WATCH_NAMESPACES = 32;
    /** Most entries in {@code allowed_cidrs}. */
    public static final int MAX_ALLOWED_CIDRS = 256;

    /**
     * Defensive copies.
     */
    public BrokerConfig {
        dynamoNamespaces = List.copyOf(dynamoNamespaces);
        watchNamespaces = List.copyOf(watchNamespaces);
        allowedCidrs = List.copyOf(allowedCidrs);
    }

    /**
     * One line describing the effective configuration for the startup log; the credential appears
     * only as its location.
     *
     * @return key=value pairs in field order
     */
    public List<String[]> describe() {
        return List.of(
                new String[] {"bus_url", busUrl.toString()},
                new String[] {"ca_file", caFile.map(Path::toString).orElse("system roots")},
                new String[] {"tls_server_name", tlsServerName},
                new String[] {"client_id", clientId},
                new String[] {"credential", credential + " (value redacted)"},
                new String[] {"kubernetes_namespace", kubernetesNamespace},
                new String[] {"dynamo_namespaces", String.join(",", dynamoNamespaces)},
                new String[] {"watch_namespaces", String.join(",", watchNamespaces)},
                new String[] {"allowed_cidrs", allowedCidrs.isEmpty() ? "none"
                        : String.join(",", allowedCidrs.stream().map(Cidr::toString).toList())},
                new String[] {"metrics_listen", metricsListen.toString()},
                new String[] {"reconnect_backoff.initial", Durations.format(reconnectBackoff.initial())},
                new String[] {"reconnect_backoff.max", Durations.format(reconnectBackoff.max())},
                new String[] {"drain_deadline", Durations.format(drainDeadline)},
                new String[] {"upstream_connect_timeout", Durations.format(upstreamConnectTimeout)},
                new String[] {"bus_connect_timeout", Durations.format(busConnectTimeout)},
                new String[] {"log_format", logFormat.toString()});
    }
}
