package io.continuum.broker.app.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import io.continuum.broker.relay.api.ReconnectBackoff;

import io.continuum.broker.relay.api.Cidr;

/**
 * The validated, immutable broker configuration (R-CFG); every default already applied. Built only
 * by {@link ConfigLoader} from the declarations in {@link Fields}. Holds where the credential lives, never the credential.
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
 * @param logLevel               least severe level logged (addition beyond R-CFG)
 * @param settings               the effective configuration in field order, each value with its origin
 * @param values                 every field's validated value by its declaration, see {@link #get(Field)}
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
                           LogFormat logFormat,
                           LogLevel logLevel,
                           List<Setting> settings,
                           Map<Field<?>, Object> values) {

    /** Default path of the configuration file. */
    public static final Path DEFAULT_PATH = Path.of("/etc/continuum-event-broker/config.yaml");

    /**
     * One line of the effective configuration.
     *
     * @param name   field path ({@code credential} for the credential's location)
     * @param value  the value as text; the credential only as its location
     * @param origin {@code file:line}, {@code environment variable NAME}, {@code default} or what it derives from
     */
    public record Setting(String name, String value, String origin) {
    }

    /**
     * Defensive copies.
     */
    public BrokerConfig {
        dynamoNamespaces = List.copyOf(dynamoNamespaces);
        watchNamespaces = List.copyOf(watchNamespaces);
        allowedCidrs = List.copyOf(allowedCidrs);
        settings = List.copyOf(settings);
        values = Map.copyOf(values);
    }

    /**
     * A field's validated value, by its declaration in {@link Fields}: a field added to the table is
     * read here without another edit of this record.
     *
     * @param field the field
     * @param <T>   its type
     * @return the value, or empty when the field is unset and has no default
     */
    public <T> Optional<T> get(Field<T> field) {
        @SuppressWarnings("unchecked")
        T value = (T) values.get(field);
        return Optional.ofNullable(value);
    }

    /**
     * The effective configuration as key/value pairs for the startup log; the credential appears
     * only as its location.
     *
     * @return pairs in field order
     */
    public List<String[]> describe() {
        return settings.stream().map(s -> new String[] {s.name(), s.value()}).toList();
    }
}
