package io.continuum.broker.app.config;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

import io.helidon.common.media.type.MediaTypes;
import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import io.helidon.config.yaml.YamlConfigParser;

/**
 * Reads, overlays and validates the broker configuration (R-CFG). Strict: unknown fields in the file
 * or in {@code CONTINUUM_EVENT_BROKER_*} variables are errors, and every problem is collected
 * before failing, so one run of {@code --check-config} lists them all.
 *
 * <p>Environment overlay rule: {@code CONTINUUM_EVENT_BROKER_} + the field path upper-cased with
 * {@code .} replaced by {@code _} (e.g. {@code CONTINUUM_EVENT_BROKER_RECONNECT_BACKOFF_INITIAL});
 * list fields are comma-separated; a variable overrides the file. Reserved, never fields:
 * {@code CONTINUUM_EVENT_BROKER_CREDENTIAL}, {@code CONTINUUM_EVENT_BROKER_JAVA_OPTS} and the
 * variable named by {@code credential_env}.
 */
public final class ConfigLoader {
    /** Prefix of every overlay variable. */
    public static final String ENV_PREFIX = "CONTINUUM_EVENT_BROKER_";
    /** The launcher's JVM options variable, reserved. */
    public static final String JAVA_OPTS_ENV = "CONTINUUM_EVENT_BROKER_JAVA_OPTS";
    /** Kubernetes downward-API variable consulted when {@code kubernetes_namespace} is not set. */
    public static final String POD_NAMESPACE_ENV = "POD_NAMESPACE";
    /** The ServiceAccount namespace file consulted after {@code $POD_NAMESPACE}. */
    public static final Path SERVICE_ACCOUNT_NAMESPACE_FILE =
            Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");

    private static final int MAX_FILE_BYTES = 1 << 20;
    /** Deepest nesting copied from the file; fields nest at most two levels, lists of strings one more. */
    private static final int MAX_DEPTH = 16;
    private static final String BACKOFF = "reconnect_backoff";
    private static final Set<String> LIST_FIELDS = Set.of("dynamo_namespaces", "watch_namespaces", "allowed_cidrs");
    /** Every leaf field path, in documentation order. */
    static final List<String> FIELDS = List.of(
            "bus_url", "ca_file", "tls_server_name", "client_id", "credential_file", "credential_env",
            "kubernetes_namespace", "dynamo_namespaces", "watch_namespaces", "allowed_cidrs", "metrics_listen",
            "reconnect_backoff.initial", "reconnect_backoff.max", "drain_deadline", "upstream_connect_timeout",
            "bus_connect_timeout", "log_format");

    private final Map<String, String> environment;
    private final Path serviceAccountNamespaceFile;

    private ConfigLoader(Map<String, String> environment, Path serviceAccountNamespaceFile) {
        this.environment = Map.copyOf(environment);
        this.serviceAccountNamespaceFile = serviceAccountNamespaceFile;
    }

    /**
     * A loader reading the real process environment and ServiceAccount namespace file.
     *
     * @return loader
     */
    public static ConfigLoader create() {
        return new ConfigLoader(System.getenv(), SERVICE_ACCOUNT_NAMESPACE_FILE);
    }

    /**
     * A loader with injected sources (tests).
     *
     * @param environment                 environment variables
     * @param serviceAccountNamespaceFile file holding the pod's namespace
     * @return loader
     */
    public static ConfigLoader create(Map<String, String> environment, Path serviceAccountNamespaceFile) {
        return new ConfigLoader(environment, serviceAccountNamespaceFile);
    }

    /**
     * The overlay variable of a field path.
     *
     * @param fieldPath e.g. {@code reconnect_backoff.initial}
     * @return e.g. {@code CONTINUUM_EVENT_BROKER_RECONNECT_BACKOFF_INITIAL}
     */
    public static String envName(String fieldPath) {
        return ENV_PREFIX + fieldPath.toUpperCase(Locale.ROOT).replace('.', '_');
    }

    /**
     * Loads and validates.
     *
     * @param file YAML configuration file
     * @return the configuration
     * @throws ConfigException listing every problem found
     */
    public BrokerConfig load(Path file) throws ConfigException {
        Problems problems = new Problems();
        String fileSource = file.toString();
        Map<String, RawNode> raw = new LinkedHashMap<>();
        Optional<RawNode> root = readFile(file, fileSource, problems);
        root.ifPresent(r -> flatten(r, fileSource, raw, problems));
        overlayEnvironment(raw, problems);
        if (root.isEmpty()) {
            // The file itself is unusable: field-level "is required" noise would only hide that.
            throw new ConfigException(problems.list);
        }
        BrokerConfig config = new Validator(raw, fileSource, problems).validate();
        if (!problems.isEmpty()) {
            throw new ConfigException(problems.list);
        }
        return Objects.requireNonNull(config);
    }

    private Optional<RawNode> readFile(Path file, String source, Problems problems) {
        byte[] bytes;
        try {
            if (Files.isDirectory(file)) {
                problems.add(source, "(file)", "is a directory, not a configuration file");
                return Optional.empty();
            }
            long size = Files.size(file);
            if (size > MAX_FILE_BYTES) {
                problems.add(source, "(file)", "is " + size + " bytes; a configuration file is at most 1 MiB");
                return Optional.empty();
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            problems.add(source, "(file)", "does not exist");
            return Optional.empty();
        } catch (IOException e) {
            problems.add(source, "(file)", "cannot be read: " + e.getClass().getSimpleName());
            return Optional.empty();
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            problems.add(source, "(file)", "is not valid UTF-8");
            return Optional.empty();
        }
        if (text.isBlank()) {
            return Optional.of(new RawNode.Mapping(Map.of(), source));
        }
        Config config;
        try {
            config = Config.builder()
                    .disableEnvironmentVariablesSource()
                    .disableSystemPropertiesSource()
                    .disableParserServices()
                    .disableFilterServices()
                    .disableKeyResolving()
                    .disableValueResolving()
                    .disableCaching()
                    .addParser(YamlConfigParser.create())
                    .addSource(ConfigSources.create(text, MediaTypes.APPLICATION_X_YAML))
                    .build();
            return Optional.of(toRaw(config, source, problems, 0));
        } catch (RuntimeException e) {
            Throwable cause = rootCause(e);
            if (cause instanceof ClassCastException) {
                // Helidon's YAML parser expects a mapping at the top level.
                problems.add(source, "(file)", "must be a YAML mapping of fields at the top level");
            } else {
                problems.add(source, "(file)", "is not valid YAML: " + firstLine(cause.getMessage()));
            }
            return Optional.empty();
        }
    }

    /**
     * Copies Helidon's tree. Helidon reads {@code .} in a key as nesting, so a key with an empty part
     * ({@code .a}, {@code a.}, {@code a..b}) names a child whose key is its parent's own: that child is
     * reported and left out, never followed (following it recursed until the stack overflowed; found
     * by ConfigLoaderFuzzTest). No field of R-CFG nests deeper than two levels, so deeper nesting is
     * reported too instead of walked.
     */
    private static RawNode toRaw(Config node, String source, Problems problems, int depth) {
        return switch (node.type()) {
            case OBJECT -> {
                Map<String, RawNode> fields = new LinkedHashMap<>();
                for (Config child : node.asNodeList().orElseGet(List::of)) {
                    if (child.name().isEmpty() || child.key().equals(node.key())) {
                        problems.add(source, keyOf(node), "holds a key with an empty part (a key that starts or"
                                + " ends with '.' or contains '..'; '.' separates nested fields)");
                    } else if (depth >= MAX_DEPTH) {
                        problems.add(source, keyOf(node), "nests deeper than any configuration field");
                    } else {
                        fields.put(child.name(), toRaw(child, source, problems, depth + 1));
                    }
                }
                yield new RawNode.Mapping(fields, source);
            }
            case LIST -> {
                List<RawNode> items = new ArrayList<>();
                for (Config child : node.asNodeList().orElseGet(List::of)) {
                    if (depth >= MAX_DEPTH) {
                        problems.add(source, keyOf(node), "nests deeper than any configuration field");
                        break;
                    }
                    items.add(toRaw(child, source, problems, depth + 1));
                }
                yield new RawNode.Sequence(items, source);
            }
            case VALUE -> new RawNode.Scalar(node.asString().orElse(""), source);
            case MISSING -> new RawNode.Mapping(Map.of(), source);
        };
    }

    private static String keyOf(Config node) {
        return node.key().isRoot() ? "(file)" : node.key().toString();
    }

    private static void flatten(RawNode root, String source, Map<String, RawNode> out, Problems problems) {
        if (!(root instanceof RawNode.Mapping top)) {
            problems.add(source, "(file)", "must be a YAML mapping of fields, not " + root.kind());
            return;
        }
        for (var e : top.fields().entrySet()) {
            String key = e.getKey();
            if (key.equals(BACKOFF)) {
                if (e.getValue() instanceof RawNode.Mapping backoff) {
                    for (var b : backoff.fields().entrySet()) {
                        String path = BACKOFF + "." + b.getKey();
                        if (FIELDS.contains(path)) {
                            out.put(path, b.getValue());
                        } else {
                            problems.add(source, path, unknownField());
                        }
                    }
                } else {
                    problems.add(source, key, "must be a mapping with initial and max, not " + e.getValue().kind());
                }
            } else if (FIELDS.contains(key) && !key.contains(".")) {
                out.put(key, e.getValue());
            } else {
                problems.add(source, key, unknownField());
            }
        }
    }

    private static String unknownField() {
        return "unknown field (known fields: " + String.join(", ", FIELDS) + ")";
    }

    private void overlayEnvironment(Map<String, RawNode> raw, Problems problems) {
        Map<String, String> byEnvName = new TreeMap<>();
        for (String f : FIELDS) {
            byEnvName.put(envName(f), f);
        }
        // credential_env may itself be overlaid; the variable it names is reserved.
        String credentialEnvName = environment.get(envName("credential_env"));
        if (credentialEnvName == null && raw.get("credential_env") instanceof RawNode.Scalar s) {
            credentialEnvName = s.value();
        }
        for (var e : new TreeMap<>(environment).entrySet()) {
            String name = e.getKey();
            if (!name.startsWith(ENV_PREFIX)) {
                continue;
            }
            if (name.equals(CredentialLocation.DEFAULT_ENV) || name.equals(JAVA_OPTS_ENV)
                    || name.equals(credentialEnvName)) {
                continue;
            }
            String source = "environment variable " + name;
            String field = byEnvName.get(name);
            if (field == null) {
                problems.add(source, "(environment)", "names no configuration field (fields map to "
                        + ENV_PREFIX + "<FIELD_PATH> with '.' as '_', e.g. " + envName("bus_url") + ")");
                continue;
            }
            String value = e.getValue();
            if (LIST_FIELDS.contains(field)) {
                List<RawNode> items = new ArrayList<>();
                if (!value.isEmpty()) {
                    for (String item : value.split(",", -1)) {
                        items.add(new RawNode.Scalar(item.strip(), source));
                    }
                }
                raw.put(field, new RawNode.Sequence(items, source));
            } else {
                raw.put(field, new RawNode.Scalar(value, source));
            }
        }
    }

    private static Throwable rootCause(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c;
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "parse error";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /** Collected problems. */
    static final class Problems {
        private final List<ConfigProblem> list = new ArrayList<>();

        void add(String source, String field, String message) {
            list.add(new ConfigProblem(source, field, message));
        }

        boolean isEmpty() {
            return list.isEmpty();
        }
    }

    /** Field-by-field validation of the merged raw configuration. */
    private final class Validator {
        private final Map<String, RawNode> raw;
        private final String fileSource;
        private final Problems problems;

        Validator(Map<String, RawNode> raw, String fileSource, Problems problems) {
            this.raw = raw;
            this.fileSource = fileSource;
            this.problems = problems;
        }

        BrokerConfig validate() {
            BusUrl busUrl = required("bus_url").flatMap(s -> parse(s, BusUrl::parse)).orElse(null);
            Optional<Path> caFile = string("ca_file").map(Path::of);
            String tlsServerName = string("tls_server_name")
                    .filter(v -> check(v, "tls_server_name", isServerName(v),
                                       "must be a DNS name or IP literal"))
                    .orElse(busUrl == null ? null : busUrl.host());
            String clientId = required("client_id")
                    .filter(v -> check(v, "client_id", v.length() <= 253 && visibleAscii(v),
                                       "must be 1..253 visible ASCII characters (0x21-0x7E)"))
                    .orElse(null);
            CredentialLocation credential = credential();
            String kubernetesNamespace = kubernetesNamespace();
            List<String> dynamo = dynamoNamespaces();
            List<String> watch = watchNamespaces(kubernetesNamespace);
            List<Cidr> cidrs = allowedCidrs();
            ListenAddress listen = string("metrics_listen").orElse(BrokerConfig.DEFAULT_METRICS_LISTEN)
                    .transform(v -> {
                        Optional<ListenAddress> a = ListenAddress.parse(v);
                        if (a.isEmpty()) {
                            problem("metrics_listen", "must be host:port or [ipv6]:port with port 0..65535, got "
                                    + quote(v));
                        }
                        return a.orElse(null);
                    });
            Duration initial = duration("reconnect_backoff.initial", ReconnectBackoff.DEFAULT_INITIAL, null);
            Duration max = duration("reconnect_backoff.max", ReconnectBackoff.DEFAULT_MAX, null);
            if (initial != null && max != null && initial.compareTo(max) > 0) {
                problem("reconnect_backoff.initial", "(" + Durations.format(initial)
                        + ") must not exceed reconnect_backoff.max (" + Durations.format(max) + ")");
            }
            Duration drain = duration("drain_deadline", BrokerConfig.DEFAULT_DRAIN_DEADLINE,
                                      BrokerConfig.MAX_DRAIN_DEADLINE);
            Duration upstream = duration("upstream_connect_timeout", BrokerConfig.DEFAULT_UPSTREAM_CONNECT_TIMEOUT,
                                         BrokerConfig.MAX_UPSTREAM_CONNECT_TIMEOUT);
            Duration bus = duration("bus_connect_timeout", BrokerConfig.DEFAULT_BUS_CONNECT_TIMEOUT, null);
            LogFormat logFormat = string("log_format").map(v -> {
                Optional<LogFormat> f = LogFormat.parse(v);
                if (f.isEmpty()) {
                    problem("log_format", "must be key_value or json, got " + quote(v));
                }
                return f.orElse(LogFormat.KEY_VALUE);
            }).orElse(LogFormat.KEY_VALUE);

            if (!problems.isEmpty()) {
                return null;
            }
            return new BrokerConfig(busUrl, caFile, tlsServerName, clientId, credential, kubernetesNamespace,
                                    dynamo, watch, cidrs, listen, new ReconnectBackoff(initial, max), drain,
                                    upstream, bus, logFormat);
        }

        private CredentialLocation credential() {
            Optional<String> file = string("credential_file");
            Optional<String> env = string("credential_env");
            if (file.isPresent() && env.isPresent()) {
                problem("credential_file", "and credential_env are both configured; configure at most one"
                        + " (credential_env from " + raw.get("credential_env").source() + ")");
                return null;
            }
            if (file.isPresent()) {
                return new CredentialLocation.File(Path.of(file.get()));
            }
            if (env.isPresent()) {
                String name = env.get();
                if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                    problem("credential_env", "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*), got "
                            + quote(name));
                    return null;
                }
                if (FIELDS.stream().map(ConfigLoader::envName).anyMatch(name::equals) || name.equals(JAVA_OPTS_ENV)) {
                    problem("credential_env", "must not name a configuration overlay variable, got " + quote(name));
                    return null;
                }
                return new CredentialLocation.Env(name);
            }
            return new CredentialLocation.Env(CredentialLocation.DEFAULT_ENV);
        }

        private String kubernetesNamespace() {
            Optional<String> configured = string("kubernetes_namespace");
            if (configured.isPresent()) {
                return namespaceName("kubernetes_namespace", configured.get());
            }
            String pod = environment.get(POD_NAMESPACE_ENV);
            if (pod != null && !pod.isEmpty()) {
                if (!HostNames.isNamespaceName(pod)) {
                    problems.add("environment variable " + POD_NAMESPACE_ENV, "kubernetes_namespace",
                                 "must be a Kubernetes namespace name (RFC 1123 label), got " + quote(pod));
                    return null;
                }
                return pod;
            }
            try {
                String fromFile = Files.readString(serviceAccountNamespaceFile).strip();
                if (HostNames.isNamespaceName(fromFile)) {
                    return fromFile;
                }
                problems.add(serviceAccountNamespaceFile.toString(), "kubernetes_namespace",
                             "must hold a Kubernetes namespace name (RFC 1123 label), got " + quote(fromFile));
                return null;
            } catch (IOException e) {
                problems.add(fileSource, "kubernetes_namespace", "is not set, $" + POD_NAMESPACE_ENV
                        + " is unset and " + serviceAccountNamespaceFile + " cannot be read; set one of them");
                return null;
            }
        }

        private String namespaceName(String field, String v) {
            if (!HostNames.isNamespaceName(v)) {
                problem(field, "must be a Kubernetes namespace name (RFC 1123 label), got " + quote(v));
                return null;
            }
            return v;
        }

        private List<String> dynamoNamespaces() {
            if (!raw.containsKey("dynamo_namespaces")) {
                problems.add(fileSource, "dynamo_namespaces", "is required (a list of 1.."
                        + BrokerConfig.MAX_DYNAMO_NAMESPACES + " Dynamo namespaces)");
                return List.of();
            }
            List<String> items = stringList("dynamo_namespaces", 1, BrokerConfig.MAX_DYNAMO_NAMESPACES);
            for (String v : items) {
                check(v, "dynamo_namespaces", v.length() <= 253 && visibleAscii(v),
                      "entries must be 1..253 visible ASCII characters (0x21-0x7E)");
            }
            return items;
        }

        private List<String> watchNamespaces(String kubernetesNamespace) {
            if (!raw.containsKey("watch_namespaces")) {
                return kubernetesNamespace == null ? List.of() : List.of(kubernetesNamespace);
            }
            List<String> items = stringList("watch_namespaces", 1, BrokerConfig.MAX_WATCH_NAMESPACES);
            items.forEach(v -> namespaceName("watch_namespaces", v));
            return items;
        }

        private List<Cidr> allowedCidrs() {
            if (!raw.containsKey("allowed_cidrs")) {
                return List.of();
            }
            List<Cidr> out = new ArrayList<>();
            Set<Cidr> seen = new HashSet<>();
            for (String v : stringList("allowed_cidrs", 0, BrokerConfig.MAX_ALLOWED_CIDRS)) {
                Optional<Cidr> c = Cidr.parse(v);
                if (c.isEmpty()) {
                    problem("allowed_cidrs", "entry " + quote(v) + " is not an IPv4 or IPv6 CIDR"
                            + " (canonical address, optional /prefix)");
                } else if (seen.add(c.get())) {
                    out.add(c.get());
                }
            }
            return out;
        }

        private List<String> stringList(String field, int min, int max) {
            RawNode node = raw.get(field);
            if (!(node instanceof RawNode.Sequence seq)) {
                problem(field, "must be a list, not " + node.kind());
                return List.of();
            }
            List<String> out = new ArrayList<>();
            Set<String> seen = new HashSet<>();
            for (RawNode item : seq.items()) {
                if (!(item instanceof RawNode.Scalar s)) {
                    problem(field, "entries must be strings, found " + item.kind());
                } else if (s.value().isEmpty()) {
                    problem(field, "entries must not be empty");
                } else if (!seen.add(s.value())) {
                    problem(field, "lists " + quote(s.value()) + " more than once");
                } else {
                    out.add(s.value());
                }
            }
            if (seq.items().size() < min || seq.items().size() > max) {
                problem(field, "has " + seq.items().size() + " entries, must have " + min + ".." + max);
            }
            return out;
        }

        private Duration duration(String field, Duration dflt, Duration limit) {
            Optional<String> text = string(field);
            if (text.isEmpty()) {
                return raw.containsKey(field) ? null : dflt;
            }
            Optional<Duration> d = Durations.parse(text.get());
            if (d.isEmpty()) {
                problem(field, "must be a whole number and a unit ms, s, m or h, at least 1ms (e.g. 250ms, 10s),"
                        + " got " + quote(text.get()));
                return null;
            }
            if (limit != null && d.get().compareTo(limit) > 0) {
                problem(field, "must be at most " + Durations.format(limit) + ", got " + quote(text.get()));
                return null;
            }
            return d.get();
        }

        private Optional<String> required(String field) {
            if (!raw.containsKey(field)) {
                problems.add(fileSource, field, "is required");
                return Optional.empty();
            }
            return string(field);
        }

        /** A present, non-empty scalar; type errors and empty values are reported. */
        private Optional<String> string(String field) {
            RawNode node = raw.get(field);
            if (node == null) {
                return Optional.empty();
            }
            if (!(node instanceof RawNode.Scalar s)) {
                problem(field, "must be a string, not " + node.kind());
                return Optional.empty();
            }
            if (s.value().isEmpty()) {
                problem(field, "must not be empty (omit the field to use its default)");
                return Optional.empty();
            }
            return Optional.of(s.value());
        }

        private <T> Optional<T> parse(String value, Function<String, T> parser) {
            try {
                return Optional.of(parser.apply(value));
            } catch (IllegalArgumentException e) {
                // Only bus_url uses this; its value is not echoed (it might carry user info).
                problem("bus_url", e.getMessage());
                return Optional.empty();
            }
        }

        private boolean check(String value, String field, boolean ok, String message) {
            if (!ok) {
                problem(field, message + ", got " + quote(value));
            }
            return ok;
        }

        private void problem(String field, String message) {
            RawNode node = raw.get(field);
            problems.add(node == null ? fileSource : node.source(), field, message);
        }
    }

    private static boolean isServerName(String v) {
        return HostNames.isDnsName(v) || IpLiterals.ipv4(v).isPresent() || IpLiterals.ipv6Bytes(v).isPresent();
    }

    private static boolean visibleAscii(String v) {
        return !v.isEmpty() && v.chars().allMatch(c -> c >= 0x21 && c <= 0x7e);
    }

    /** Quotes a configured value for a message: at most 80 characters, control characters escaped. */
    static String quote(String v) {
        StringBuilder sb = new StringBuilder("\"");
        int n = Math.min(v.length(), 80);
        for (int i = 0; i < n; i++) {
            char c = v.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                sb.append(String.format("\\x%02x", (int) c));
            } else if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else {
                sb.append(c);
            }
        }
        if (v.length() > n) {
            sb.append("...");
        }
        return sb.append('"').toString();
    }
}
