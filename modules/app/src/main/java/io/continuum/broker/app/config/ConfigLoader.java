package io.continuum.broker.app.config;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Reads, overlays and validates the broker configuration (R-CFG): the file through
 * {@link YamlReader} (line numbers, duplicate keys), then {@link EnvironmentOverlay}, then
 * {@link Validator}, all driven by the field table {@link Fields}. Strict: unknown fields in the
 * file or in {@code CONTINUUM_EVENT_BROKER_*} variables are errors, and every problem is collected
 * before failing, so one run of {@code --check-config} lists them all.
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
    private static final String FILE = "(file)";

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
        String source = file.toString();
        Map<String, RawNode> raw = new LinkedHashMap<>();
        Optional<RawNode> root = readText(file, source, problems).flatMap(t -> YamlReader.read(t, source, problems));
        boolean usable = root.isPresent() && fieldsOf(root.get(), source, raw, problems);
        EnvironmentOverlay.apply(environment, raw, problems);
        if (!usable) {
            // The file itself is unusable: field-level "is required" noise would only hide that.
            throw new ConfigException(problems.list());
        }
        BrokerConfig config = new Validator(raw, source, problems, environment, serviceAccountNamespaceFile)
                .validate();
        if (!problems.isEmpty()) {
            throw new ConfigException(problems.list());
        }
        return Objects.requireNonNull(config);
    }

    private static Optional<String> readText(Path file, String source, Problems problems) {
        byte[] bytes;
        try {
            if (Files.isDirectory(file)) {
                problems.add(source, 0, FILE, "is a directory, not a configuration file");
                return Optional.empty();
            }
            long size = Files.size(file);
            if (size > MAX_FILE_BYTES) {
                problems.add(source, 0, FILE, "is " + size + " bytes; a configuration file is at most 1 MiB");
                return Optional.empty();
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            problems.add(source, 0, FILE, "does not exist");
            return Optional.empty();
        } catch (IOException e) {
            problems.add(source, 0, FILE, "cannot be read: " + e.getClass().getSimpleName());
            return Optional.empty();
        }
        try {
            return Optional.of(StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString());
        } catch (CharacterCodingException e) {
            problems.add(source, 0, FILE, "is not valid UTF-8");
            return Optional.empty();
        }
    }

    /**
     * Maps the file's keys to field paths. A nested field is written nested
     * ({@code reconnect_backoff: {initial: 2s}}) or as one dotted key ({@code reconnect_backoff.initial: 2s});
     * giving both is a duplicate key.
     *
     * @return false when the file is not a mapping of fields at all
     */
    private static boolean fieldsOf(RawNode root, String source, Map<String, RawNode> out, Problems problems) {
        if (!(root instanceof RawNode.Mapping top)) {
            problems.add(source, root.line(), FILE, "must be a YAML mapping of fields at the top level, not "
                    + root.kind());
            return false;
        }
        Map<String, Integer> lines = new HashMap<>();
        for (RawNode.Member m : top.members()) {
            if (Fields.groups().contains(m.key())) {
                if (!(m.value() instanceof RawNode.Mapping group)) {
                    problems.add(source, m.line(), m.key(), "must be a mapping with " + leaves(m.key()) + ", not "
                            + m.value().kind());
                    continue;
                }
                for (RawNode.Member child : group.members()) {
                    field(m.key() + "." + child.key(), child, source, out, lines, problems);
                }
            } else {
                field(m.key(), m, source, out, lines, problems);
            }
        }
        return true;
    }

    private static void field(String path, RawNode.Member m, String source, Map<String, RawNode> out,
                              Map<String, Integer> lines, Problems problems) {
        if (Fields.byPath(path).isEmpty()) {
            problems.add(source, m.line(), path, "unknown field (known fields: " + Fields.paths() + ")");
            return;
        }
        Integer earlier = lines.putIfAbsent(path, m.line());
        if (earlier != null) {
            problems.add(source, m.line(), path, YamlReader.duplicate(path, earlier, m.line()));
            return;
        }
        out.put(path, m.value());
    }

    private static String leaves(String group) {
        return String.join(" and ", Fields.ALL.stream().filter(f -> f.group().equals(group) && f.path().contains("."))
                .map(Field::leaf).toList());
    }
}
