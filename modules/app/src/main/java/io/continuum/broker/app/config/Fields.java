package io.continuum.broker.app.config;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.continuum.broker.relay.api.Cidr;
import io.continuum.broker.relay.api.ReconnectBackoff;
import io.continuum.broker.relay.api.RelayConfig;

import static io.continuum.broker.app.config.ConfigText.quote;
import static io.continuum.broker.app.config.ConfigText.visibleAscii;

/**
 * Every configuration field, declared once (R-CFG plus {@code log_format} and {@code log_level}).
 * Adding a field is one entry here; the broker reads it with {@code config.get(Fields.NEW_FIELD)}
 * ({@link BrokerConfig#get}). The loader, the overlay, validation, {@code --check-config}'s report
 * and the check of the docs and the example file follow from the table. Order is documentation
 * order. The defaults are the relay's ({@link RelayConfig}, {@link ReconnectBackoff}): declared there once.
 *
 * <p>Every duration has an upper bound small enough that no deadline sum or nanosecond conversion
 * in the relay can overflow ({@code Duration.toNanos()} overflows past about 292 years; the largest
 * bound here is an hour), so whatever {@code --check-config} accepts also starts.
 */
public final class Fields {
    /** {@code bus_url}. */
    public static final Field<BusUrl> BUS_URL = Field.required("bus_url", "URL", "",
            "the router's event bus: `https://host[:port]`, port 443 when omitted; no user info, path (a lone `/`"
                    + " is allowed), query or fragment. `http://` and other schemes are errors (R-SEC-13). IPv4"
                    + " hosts must be canonical dotted quads.",
            new Parser.Scalar<>(Fields::busUrl), BusUrl::toString);
    /** {@code ca_file}. */
    public static final Field<Path> CA_FILE = Field.derived("ca_file", "path", "system roots", "",
            "PEM bundle verifying the router certificate; see [CA bundle](#ca-bundle).",
            new Parser.Scalar<>(Fields::path), Path::toString);
    /** {@code tls_server_name}. */
    public static final Field<String> TLS_SERVER_NAME = Field.derived("tls_server_name", "string",
            "the `bus_url` host", "", "DNS name or IP literal checked against the router certificate.",
            text(Fields::isServerName, "must be a DNS name or IP literal"), String::toString);
    /** {@code client_id}. */
    public static final Field<String> CLIENT_ID = Field.required("client_id", "string", "1..253 characters",
            "visible ASCII (0x21-0x7E); the id the router binds the credential to.",
            text(v -> v.length() <= 253 && visibleAscii(v), "must be 1..253 visible ASCII characters (0x21-0x7E)"),
            String::toString);
    /** {@code credential_file}. */
    public static final Field<Path> CREDENTIAL_FILE = Field.derived("credential_file", "path",
            "unset", "", "file holding the bearer credential; at most one of `credential_file` and"
                    + " `credential_env`; see [Credential](#credential).",
            new Parser.Scalar<>(Fields::path), Path::toString);
    /** {@code credential_env}. */
    public static final Field<String> CREDENTIAL_ENV = Field.derived("credential_env", "variable name",
            "`CONTINUUM_EVENT_BROKER_CREDENTIAL` when `credential_file` is unset too", "",
            "variable holding the bearer credential: `[A-Za-z_][A-Za-z0-9_]*`, not a field's overlay variable.",
            new Parser.Scalar<>(Fields::credentialEnv), String::toString);
    /** {@code kubernetes_namespace}. */
    public static final Field<String> KUBERNETES_NAMESPACE = Field.derived("kubernetes_namespace", "string",
            "`$POD_NAMESPACE`, else `/var/run/secrets/kubernetes.io/serviceaccount/namespace`", "",
            "Kubernetes namespace name (RFC 1123 label); declared in `hello`. With none of the three it is an"
                    + " error.",
            text(HostNames::isNamespaceName, "must be a Kubernetes namespace name (RFC 1123 label)"),
            String::toString);
    /** {@code dynamo_namespaces}. */
    public static final Field<List<String>> DYNAMO_NAMESPACES = Field.required("dynamo_namespaces",
            "list of strings", "1..64 entries",
            "distinct Dynamo namespaces (1..253 visible ASCII characters each); declared in `hello`, enforced by"
                    + " target check 2.",
            new Parser.ListOf<>(1, 64, check(v -> v.length() <= 253 && visibleAscii(v),
                    "entries must be 1..253 visible ASCII characters (0x21-0x7E)")),
            list(Function.identity()));
    /** {@code watch_namespaces}. */
    public static final Field<List<String>> WATCH_NAMESPACES = Field.derived("watch_namespaces",
            "list of strings", "`[kubernetes_namespace]`", "1..32 entries",
            "distinct Kubernetes namespace names where `DynamoWorkerMetadata` is watched.",
            new Parser.ListOf<>(1, 32, check(HostNames::isNamespaceName,
                    "must be a Kubernetes namespace name (RFC 1123 label)")),
            list(Function.identity()));
    /** {@code allowed_cidrs}. */
    public static final Field<List<Cidr>> ALLOWED_CIDRS = Field.defaulted("allowed_cidrs", "list of CIDRs",
            List.of(), "0..256 entries",
            "IPv4/IPv6 dial allow-list. Normalised: host bits cleared (`10.1.2.3/8` → `10.0.0.0/8`), a bare"
                    + " address is a `/32` or `/128`, an IPv4-mapped IPv6 entry is the IPv4 entry it denotes"
                    + " (`::ffff:10.0.0.0/104` → `10.0.0.0/8`), IPv6 in RFC 5952 form, duplicates dropped."
                    + " Non-canonical IPv4 (`010.0.0.0`), host names, zone ids and bracketed IPv6 are errors. An"
                    + " empty overlay variable is an error; `[]` is the empty list.",
            new Parser.ListOf<>(0, 256, Fields::cidr), list(Cidr::toString));
    /** {@code metrics_listen}. */
    public static final Field<ListenAddress> METRICS_LISTEN = Field.defaulted("metrics_listen", "host:port",
            new ListenAddress("0.0.0.0", 9464), "port 0..65535",
            "address of `/metrics`, `/healthz`, `/readyz`, `/readyz/session` and `/statusz`: `host:port` or `[ipv6]:port`"
                    + " (port 0 picks a free port).",
            new Parser.Scalar<>(Fields::listen), ListenAddress::toString);
    /** {@code reconnect_backoff.initial}. */
    public static final Field<Duration> RECONNECT_BACKOFF_INITIAL = duration("reconnect_backoff.initial",
            ReconnectBackoff.DEFAULT.initial(), Duration.ofHours(1), "first reconnect delay; must not exceed `.max`.");
    /** {@code reconnect_backoff.max}. */
    public static final Field<Duration> RECONNECT_BACKOFF_MAX = duration("reconnect_backoff.max",
            ReconnectBackoff.DEFAULT.max(), Duration.ofHours(1), "largest reconnect delay (jittered exponential range).");
    /** {@code drain_deadline}. */
    public static final Field<Duration> DRAIN_DEADLINE = duration("drain_deadline",
            RelayConfig.DEFAULT_DRAIN_DEADLINE,
            Duration.ofMinutes(10), "how long SIGTERM lets open streams finish. Keep it below the Pod's"
                    + " `terminationGracePeriodSeconds`.");
    /** {@code upstream_connect_timeout}. */
    public static final Field<Duration> UPSTREAM_CONNECT_TIMEOUT = duration("upstream_connect_timeout",
            RelayConfig.DEFAULT_UPSTREAM_CONNECT_TIMEOUT, RelayConfig.MAX_UPSTREAM_CONNECT_TIMEOUT,
            "one publisher connect attempt (all attempts of one stream together are bounded by 10 s, R-OPEN).");
    /** {@code bus_connect_timeout}. */
    public static final Field<Duration> BUS_CONNECT_TIMEOUT = duration("bus_connect_timeout",
            RelayConfig.DEFAULT_BUS_CONNECT_TIMEOUT, Duration.ofHours(1), "bounds TCP + TLS + HTTP/2 set-up up to"
                    + " sending `hello`; the wait for the response head and `welcome` then gets its own"
                    + " `bus_connect_timeout`, counted from `hello` (a slow handshake never eats it).");
    /** {@code log_format}. */
    public static final Field<LogFormat> LOG_FORMAT = Field.defaulted("log_format", "`key_value` or `json`",
            LogFormat.KEY_VALUE, "", "log line format. An addition beyond R-CFG, see [Logging](#logging).",
            choice(LogFormat.values(), LogFormat::parse), LogFormat::toString);
    /** {@code log_level}. */
    public static final Field<LogLevel> LOG_LEVEL = Field.defaulted("log_level",
            "`error`, `warn`, `info` or `debug`", LogLevel.INFO, "",
            "least severe level logged. An addition beyond R-CFG, see [Logging](#logging).",
            choice(LogLevel.values(), LogLevel::parse), LogLevel::toString);

    /** Every field, in documentation order. */
    public static final List<Field<?>> ALL = List.of(BUS_URL, CA_FILE, TLS_SERVER_NAME, CLIENT_ID, CREDENTIAL_FILE,
            CREDENTIAL_ENV, KUBERNETES_NAMESPACE, DYNAMO_NAMESPACES, WATCH_NAMESPACES, ALLOWED_CIDRS, METRICS_LISTEN,
            RECONNECT_BACKOFF_INITIAL, RECONNECT_BACKOFF_MAX, DRAIN_DEADLINE, UPSTREAM_CONNECT_TIMEOUT,
            BUS_CONNECT_TIMEOUT, LOG_FORMAT, LOG_LEVEL);

    private Fields() {
    }

    /**
     * The field at a path.
     *
     * @param path e.g. {@code reconnect_backoff.max}
     * @return the field, or empty
     */
    public static Optional<Field<?>> byPath(String path) {
        return ALL.stream().filter(f -> f.path().equals(path)).findFirst();
    }

    /**
     * The names that group nested fields ({@code reconnect_backoff}).
     *
     * @return group names
     */
    static List<String> groups() {
        return ALL.stream().filter(f -> f.path().contains(".")).map(Field::group).distinct().toList();
    }

    /**
     * The paths of every field, for messages.
     *
     * @return comma-separated paths
     */
    static String paths() {
        return ALL.stream().map(Field::path).collect(Collectors.joining(", "));
    }

    // ---------------------------------------------------------------- parsers

    private static Field<Duration> duration(String path, Duration dflt, Duration max, String description) {
        return Field.defaulted(path, "duration", dflt, "1ms.." + Durations.format(max), description,
                new Parser.Scalar<>(text -> {
                    Optional<Duration> d = Durations.parse(text);
                    if (d.isEmpty()) {
                        return Parser.Result.problem("must be a whole number and a unit ms, s, m or h, at least 1ms"
                                + " (e.g. 250ms, 10s), got " + quote(text));
                    }
                    if (d.get().compareTo(max) > 0) {
                        return Parser.Result.problem("must be at most " + Durations.format(max) + ", got "
                                + quote(text));
                    }
                    return Parser.Result.ok(d.get());
                }), Durations::format);
    }

    /**
     * The largest value a duration field accepts.
     *
     * @param field a duration field
     * @return its bound
     */
    static Duration maxOf(Field<Duration> field) {
        return Durations.parse(field.bounds().substring(field.bounds().indexOf("..") + 2)).orElseThrow();
    }

    private static <E extends Enum<E>> Parser.Scalar<E> choice(E[] values, Function<String, Optional<E>> parse) {
        String names = Stream.of(values).map(Object::toString).collect(Collectors.joining(", "));
        int last = names.lastIndexOf(", ");
        String words = last < 0 ? names : names.substring(0, last) + " or " + names.substring(last + 2);
        return new Parser.Scalar<>(text -> parse.apply(text).map(Parser.Result::ok)
                .orElseGet(() -> Parser.Result.problem("must be " + words + ", got " + quote(text))));
    }

    private static Parser.Scalar<String> text(Predicate<String> ok, String message) {
        return new Parser.Scalar<>(check(ok, message));
    }

    private static Function<String, Parser.Result<String>> check(Predicate<String> ok, String message) {
        return v -> ok.test(v) ? Parser.Result.ok(v) : Parser.Result.problem(message + ", got " + quote(v));
    }

    private static <E> Function<List<E>, String> list(Function<E, String> item) {
        return l -> l.isEmpty() ? "none" : l.stream().map(item).collect(Collectors.joining(","));
    }

    private static Parser.Result<BusUrl> busUrl(String text) {
        try {
            return Parser.Result.ok(BusUrl.parse(text));
        } catch (IllegalArgumentException e) {
            // The value is not echoed: it might carry user info.
            return Parser.Result.problem(e.getMessage());
        }
    }

    private static Parser.Result<Path> path(String text) {
        try {
            return Parser.Result.ok(Path.of(text));
        } catch (InvalidPathException e) {
            return Parser.Result.problem("is not a valid path, got " + quote(text));
        }
    }

    private static Parser.Result<String> credentialEnv(String name) {
        if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
            return Parser.Result.problem("must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*), got "
                    + quote(name));
        }
        if (ALL.stream().map(Field::envName).anyMatch(name::equals) || name.equals(ConfigLoader.JAVA_OPTS_ENV)) {
            return Parser.Result.problem("must not name a configuration overlay variable, got " + quote(name));
        }
        return Parser.Result.ok(name);
    }

    private static Parser.Result<Cidr> cidr(String text) {
        try {
            return Parser.Result.ok(Cidr.parse(text));
        } catch (Cidr.InvalidCidrException e) {
            return Parser.Result.problem("entry " + quote(text) + " is not an IPv4 or IPv6 CIDR: " + e.reason());
        }
    }

    private static Parser.Result<ListenAddress> listen(String text) {
        return ListenAddress.parse(text).map(Parser.Result::ok).orElseGet(() -> Parser.Result.problem(
                "must be host:port or [ipv6]:port with port 0..65535, got " + quote(text)));
    }

    private static boolean isServerName(String v) {
        return HostNames.isDnsName(v) || IpLiterals.ipv4(v).isPresent() || IpLiterals.ipv6Bytes(v).isPresent();
    }
}
