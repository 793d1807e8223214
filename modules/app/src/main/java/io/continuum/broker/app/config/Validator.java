package io.continuum.broker.app.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import io.continuum.broker.relay.api.ReconnectBackoff;

import static io.continuum.broker.app.config.ConfigText.quote;

/**
 * Validation of the merged raw configuration: each field by its declaration in {@link Fields}
 * (type, emptiness, parse, bounds, default), then the rules between fields (the credential's one
 * location, {@code initial <= max}, the namespace fallbacks).
 */
final class Validator {
    private final Map<String, RawNode> raw;
    private final String fileSource;
    private final Problems problems;
    private final Map<String, String> environment;
    private final Path serviceAccountNamespaceFile;
    private final Map<Field<?>, Object> values = new HashMap<>();
    private final Map<Field<?>, String> origins = new HashMap<>();

    Validator(Map<String, RawNode> raw, String fileSource, Problems problems, Map<String, String> environment,
              Path serviceAccountNamespaceFile) {
        this.raw = raw;
        this.fileSource = fileSource;
        this.problems = problems;
        this.environment = environment;
        this.serviceAccountNamespaceFile = serviceAccountNamespaceFile;
    }

    /** The configuration, or null when a problem was found. */
    BrokerConfig validate() {
        for (Field<?> f : Fields.ALL) {
            field(f);
        }
        CredentialLocation credential = credential();
        BusUrl busUrl = get(Fields.BUS_URL);
        if (!values.containsKey(Fields.TLS_SERVER_NAME) && busUrl != null) {
            derive(Fields.TLS_SERVER_NAME, busUrl.host(), "the bus_url host");
        }
        kubernetesNamespace();
        String namespace = get(Fields.KUBERNETES_NAMESPACE);
        if (!raw.containsKey(Fields.WATCH_NAMESPACES.path()) && namespace != null) {
            derive(Fields.WATCH_NAMESPACES, List.of(namespace), "kubernetes_namespace");
        }
        Duration initial = get(Fields.RECONNECT_BACKOFF_INITIAL);
        Duration max = get(Fields.RECONNECT_BACKOFF_MAX);
        if (initial != null && max != null && initial.compareTo(max) > 0) {
            // Reported at whichever end was written (the other may be its default).
            if (raw.containsKey(Fields.RECONNECT_BACKOFF_INITIAL.path())) {
                problem(Fields.RECONNECT_BACKOFF_INITIAL, "(" + Durations.format(initial)
                        + ") must not exceed reconnect_backoff.max (" + Durations.format(max) + ")");
            } else {
                problem(Fields.RECONNECT_BACKOFF_MAX, "(" + Durations.format(max)
                        + ") must not be less than reconnect_backoff.initial (" + Durations.format(initial) + ")");
            }
        }
        if (!problems.isEmpty()) {
            return null;
        }
        return new BrokerConfig(busUrl, Optional.ofNullable(get(Fields.CA_FILE)), get(Fields.TLS_SERVER_NAME),
                get(Fields.CLIENT_ID), credential, namespace, get(Fields.DYNAMO_NAMESPACES),
                get(Fields.WATCH_NAMESPACES), get(Fields.ALLOWED_CIDRS), get(Fields.METRICS_LISTEN),
                new ReconnectBackoff(initial, max), get(Fields.DRAIN_DEADLINE), get(Fields.UPSTREAM_CONNECT_TIMEOUT),
                get(Fields.BUS_CONNECT_TIMEOUT), get(Fields.LOG_FORMAT), get(Fields.LOG_LEVEL),
                settings(credential), values);
    }

    @SuppressWarnings("unchecked")
    private <T> T get(Field<T> field) {
        return (T) values.get(field);
    }

    private <T> void derive(Field<T> field, T value, String origin) {
        values.put(field, value);
        origins.put(field, origin);
    }

    private <T> void field(Field<T> f) {
        RawNode node = raw.get(f.path());
        if (node == null) {
            switch (f.presence()) {
                case REQUIRED -> problems.add(fileSource, 0, f.path(), f.isList()
                        ? "is required (a list of " + f.bounds() + ")" : "is required");
                case DEFAULT -> derive(f, f.defaultValue(), "default");
                case DERIVED -> {
                    // filled in by the rules between fields, or absent
                }
            }
            return;
        }
        T value = parse(f, node);
        if (value != null) {
            values.put(f, value);
            origins.put(f, origin(node));
        }
    }

    @SuppressWarnings("unchecked")
    private <T> T parse(Field<T> f, RawNode node) {
        return switch (f.parser()) {
            case Parser.Scalar<T> scalar -> scalar(f, node, scalar);
            case Parser.ListOf<?> list -> (T) list(f, node, list);
        };
    }

    private <T> T scalar(Field<T> f, RawNode node, Parser.Scalar<T> parser) {
        if (!(node instanceof RawNode.Scalar s)) {
            problems.at(node, f.path(), "must be a string, not " + node.kind());
            return null;
        }
        if (s.value().isEmpty()) {
            problems.at(node, f.path(), "must not be empty (omit the field to use its default)");
            return null;
        }
        Parser.Result<T> r = parser.parse().apply(s.value());
        if (r.problem() != null) {
            problems.at(node, f.path(), r.problem());
        }
        return r.value();
    }

    private <E> List<E> list(Field<?> f, RawNode node, Parser.ListOf<E> parser) {
        if (!(node instanceof RawNode.Sequence seq)) {
            problems.at(node, f.path(), "must be a list, not " + node.kind());
            return null;
        }
        Set<E> out = new LinkedHashSet<>();
        Set<String> seen = new HashSet<>();
        boolean ok = true;
        for (RawNode item : seq.items()) {
            if (!(item instanceof RawNode.Scalar s)) {
                problems.at(item, f.path(), "entries must be strings, found " + item.kind());
                ok = false;
            } else if (s.value().isEmpty()) {
                problems.at(item, f.path(), "entries must not be empty");
                ok = false;
            } else if (!seen.add(s.value())) {
                problems.at(item, f.path(), "lists " + quote(s.value()) + " more than once");
                ok = false;
            } else {
                Parser.Result<E> r = parser.element().apply(s.value());
                if (r.problem() != null) {
                    problems.at(item, f.path(), r.problem());
                    ok = false;
                } else {
                    out.add(r.value()); // entries equal once normalised are kept once
                }
            }
        }
        if (seq.items().size() < parser.min() || seq.items().size() > parser.max()) {
            problems.at(node, f.path(), "has " + seq.items().size() + " entries, must have " + parser.min() + ".."
                    + parser.max());
            ok = false;
        }
        return ok ? List.copyOf(out) : null;
    }

    private CredentialLocation credential() {
        Path file = get(Fields.CREDENTIAL_FILE);
        String env = get(Fields.CREDENTIAL_ENV);
        if (file != null && env != null) {
            RawNode envNode = raw.get(Fields.CREDENTIAL_ENV.path());
            problem(Fields.CREDENTIAL_FILE, "and credential_env are both configured; configure at most one"
                    + " (credential_env from " + location(envNode) + ")");
            return null;
        }
        if (file != null) {
            return new CredentialLocation.File(file);
        }
        return new CredentialLocation.Env(env != null ? env : CredentialLocation.DEFAULT_ENV);
    }

    private void kubernetesNamespace() {
        if (raw.containsKey(Fields.KUBERNETES_NAMESPACE.path())) {
            return; // validated as a field
        }
        String pod = environment.get(ConfigLoader.POD_NAMESPACE_ENV);
        if (pod != null && !pod.isEmpty()) {
            if (!HostNames.isNamespaceName(pod)) {
                problems.add("environment variable " + ConfigLoader.POD_NAMESPACE_ENV, 0, "kubernetes_namespace",
                             "must be a Kubernetes namespace name (RFC 1123 label), got " + quote(pod));
                return;
            }
            derive(Fields.KUBERNETES_NAMESPACE, pod, "$" + ConfigLoader.POD_NAMESPACE_ENV);
            return;
        }
        try {
            String fromFile = Files.readString(serviceAccountNamespaceFile).strip();
            if (HostNames.isNamespaceName(fromFile)) {
                derive(Fields.KUBERNETES_NAMESPACE, fromFile, serviceAccountNamespaceFile.toString());
                return;
            }
            problems.add(serviceAccountNamespaceFile.toString(), 0, "kubernetes_namespace",
                         "must hold a Kubernetes namespace name (RFC 1123 label), got " + quote(fromFile));
        } catch (IOException | RuntimeException e) {
            problems.add(fileSource, 0, "kubernetes_namespace", "is not set, $" + ConfigLoader.POD_NAMESPACE_ENV
                    + " is unset and " + serviceAccountNamespaceFile + " cannot be read; set one of them");
        }
    }

    /** The effective configuration in field order, each with where its value came from; never a secret. */
    private List<BrokerConfig.Setting> settings(CredentialLocation credential) {
        List<BrokerConfig.Setting> out = new ArrayList<>();
        for (Field<?> f : Fields.ALL) {
            if (f == Fields.CREDENTIAL_ENV) {
                continue;
            }
            if (f == Fields.CREDENTIAL_FILE) {
                String origin = origins.getOrDefault(Fields.CREDENTIAL_FILE,
                        origins.getOrDefault(Fields.CREDENTIAL_ENV, "default"));
                out.add(new BrokerConfig.Setting("credential", credential + " (value redacted)", origin));
                continue;
            }
            out.add(setting(f));
        }
        return out;
    }

    private <T> BrokerConfig.Setting setting(Field<T> f) {
        T value = get(f);
        return new BrokerConfig.Setting(f.path(), value == null ? f.defaultText() : f.format().apply(value),
                                        origins.getOrDefault(f, "default"));
    }

    private void problem(Field<?> field, String message) {
        RawNode node = raw.get(field.path());
        if (node == null) {
            problems.add(fileSource, 0, field.path(), message);
        } else {
            problems.at(node, field.path(), message);
        }
    }

    private static String origin(RawNode node) {
        return location(node);
    }

    private static String location(RawNode node) {
        return node.line() > 0 ? node.source() + ":" + node.line() : node.source();
    }
}
