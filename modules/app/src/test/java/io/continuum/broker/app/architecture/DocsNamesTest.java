package io.continuum.broker.app.architecture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.module.ModuleReader;
import java.lang.module.ResolvedModule;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The docs cite only what exists: every name of the project's own that docs/*.md and README.md put in backticks
 * (a type, a type's member, a file of the repository, a metric, a configuration field) is still there, so a rename or a deletion that forgets
 * the docs fails here rather than misleading a reader.
 * <p>
 * A type name counts as the project's when it is declared in the project's sources. Any other type name must be one
 * a reader can look up elsewhere: a class on this module's path (the JDK, Helidon, client-java, OkHttp, Jackson,
 * JeroMQ), a word of the repository's other files (alert names and Kubernetes values in deploy/, say), or one of the
 * few listed in {@link #ELSEWHERE} with where it comes from. A deleted class of ours is none of these.
 */
class DocsNamesTest {
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent().getParent();

    /** Names that are neither ours nor on this module's path, with where a reader finds them. */
    private static final Set<String> ELSEWHERE = Set.of(
            // Netty: the test router's second HTTP/2 stack, on the relay's test path only
            "Http2FrameCodec",
            // OkHttp's own test peer, the model of testing's RawH2Peer
            "MockHttp2Peer",
            // Helidon's metrics observer, which the app does not use (MetricsEndpoint says why)
            "MetricsObserver",
            // systemd unit keys (docs/deployment.md, running without Kubernetes)
            "ExecStartPre", "TimeoutStopSec", "NoNewPrivileges", "RestartPreventExitStatus",
            // JVM flags, GC pool and JFR names, and JDK internals that a profile or a heap dump shows
            "PerBytecodeTrapLimit", "CompilerThre", "MarkSweepCompact", "Eden", "Survivor", "Tenured", "Gen",
            "Space", "NativeDispatcher", "SocketDispatcher", "TypeSwitch", "ObjectMethods",
            // Jazzer's fuzzing API
            "FuzzedDataProvider",
            // Kubernetes words: Pod phases and waiting reasons, field values
            "Pod", "Pending", "CrashLoopBackOff", "IntOrString",
            // the Dynamo metadata's transport kinds and its custom resource
            "Zmq", "ZmqBroker", "Nats",
            // HTTP and JSON words
            "Bearer", "NaN",
            // plain English words at a sentence's start in a backticked phrase
            "The", "Copy", "Accept", "Platform", "Watch");

    private static final Pattern SPAN = Pattern.compile("`([^`\\n]+)`");
    private static final Pattern FENCE = Pattern.compile("```.*?```", Pattern.DOTALL);
    private static final Pattern TYPE = Pattern.compile("([A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Z][a-z]+)((?:[.#][A-Za-z_]\\w*)*)(\\(\\))?");
    private static final Pattern DECLARED = Pattern.compile("\\b(?:class|record|enum|interface)\\s+([A-Z]\\w*)");
    private static final Pattern METRIC = Pattern.compile("continuum_event_broker_([a-z0-9_]+)");
    private static final Pattern PATH = Pattern.compile("(?:modules|docs|deploy|\\.ci|bench|conformance|packaging)/[\\w./-]*");
    private static final List<String> METRIC_SUFFIXES = List.of("_bucket", "_count", "_sum", "_max", "_total", "_seconds",
            "_bytes", "_info");

    private static final Set<String> DECLARED_TYPES = new HashSet<>();
    /** Where each of our types is declared, for its members. */
    private static final java.util.Map<String, List<Path>> TYPE_FILES = new java.util.HashMap<>();
    private static final Set<String> ON_MODULE_PATH = new HashSet<>();
    private static String mainSources;
    private static String otherFiles;

    @BeforeAll
    static void index() throws IOException {
        StringBuilder main = new StringBuilder();
        StringBuilder other = new StringBuilder();
        for (Path file : tracked()) {
            String name = file.getFileName().toString();
            String text = Files.readString(file, java.nio.charset.StandardCharsets.ISO_8859_1);
            if (name.endsWith(".java")) {
                Matcher m = DECLARED.matcher(text);
                while (m.find()) {
                    DECLARED_TYPES.add(m.group(1));
                    TYPE_FILES.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(file);
                }
                if (file.toString().contains("/src/main/")) {
                    main.append(text).append('\n');
                }
            } else if (!isDoc(file)) {
                other.append(text).append('\n');
            }
        }
        mainSources = main.toString();
        otherFiles = other.toString();
        for (ResolvedModule module : ModuleLayer.boot().configuration().modules()) {
            try (ModuleReader reader = module.reference().open(); Stream<String> names = reader.list()) {
                names.forEach(DocsNamesTest::addClassName);
            }
        }
        for (String entry : System.getProperty("java.class.path", "").split(java.io.File.pathSeparator)) {
            if (entry.endsWith(".jar") && Files.isRegularFile(Path.of(entry))) {
                try (JarFile jar = new JarFile(entry)) {
                    jar.stream().forEach(e -> addClassName(e.getName()));
                }
            }
        }
    }

    @Test
    void everyBacktickedNameOfOursExists() throws IOException {
        Set<String> missing = new TreeSet<>();
        for (Path doc : docs()) {
            String text = FENCE.matcher(Files.readString(doc)).replaceAll("");
            Matcher span = SPAN.matcher(text);
            while (span.find()) {
                for (String raw : span.group(1).split("[\\s,;]+")) {
                    String token = raw.replaceAll("^[(\\[{<\"':=]+|[)\\]}>\"':=.]+$", "");
                    String problem = check(token);
                    if (problem != null) {
                        missing.add(ROOT.relativize(doc) + ": `" + token + "` " + problem);
                    }
                }
            }
        }
        assertEquals("", String.join("\n", missing), "names the docs cite that do not exist");
    }

    @Test
    void everyConfigurationFieldTheReferenceListsIsOneTheLoaderKnows() throws IOException {
        Set<String> unknown = new TreeSet<>();
        Matcher row = Pattern.compile("(?m)^\\| `([a-z_.]+)` \\|").matcher(Files.readString(ROOT.resolve("docs/configuration.md")));
        int rows = 0;
        while (row.find()) {
            rows++;
            if (!mainSources.contains("\"" + row.group(1) + "\"")) {
                unknown.add(row.group(1));
            }
        }
        assertEquals(Set.of(), unknown, "fields docs/configuration.md lists that the loader does not declare");
        assertTrue(rows >= 10, "the reference table was found (" + rows + " rows)");
    }

    private static String check(String token) {
        Matcher type = TYPE.matcher(token);
        if (type.matches()) {
            String name = type.group(1);
            String members = type.group(2);
            if (DECLARED_TYPES.contains(name)) {
                for (String member : members.isEmpty() ? new String[0] : members.substring(1).split("[.#]")) {
                    if (!member.isEmpty() && !Character.isUpperCase(member.charAt(0)) && !declaresMember(name, member)) {
                        return "names a member that " + name + " does not have";
                    }
                }
                return null;
            }
            if (ON_MODULE_PATH.contains(name) || ELSEWHERE.contains(name) || wordIn(otherFiles, name)) {
                return null;
            }
            return "is no type of ours, nor one on the module path";
        }
        Matcher metric = METRIC.matcher(token);
        if (metric.matches()) {
            if (wordIn(otherFiles, token) || metricDeclared(metric.group(1))) {
                return null;
            }
            return "is no metric the broker serves";
        }
        if (PATH.matcher(token).matches() && !token.contains("/target/") && !token.contains("*")) {
            return Files.exists(ROOT.resolve(token)) ? null : "is no file of the repository";
        }
        return null;
    }

    /** Metric names are declared without the prefix and without the unit and type suffixes Prometheus adds. */
    private static boolean metricDeclared(String name) {
        String base = name;
        boolean stripped = true;
        while (stripped) {
            if (mainSources.contains("\"" + base + "\"")) {
                return true;
            }
            stripped = false;
            for (String suffix : METRIC_SUFFIXES) {
                if (base.endsWith(suffix)) {
                    base = base.substring(0, base.length() - suffix.length());
                    stripped = true;
                    break;
                }
            }
        }
        return false;
    }

    private static boolean declaresMember(String type, String member) {
        for (Path file : TYPE_FILES.getOrDefault(type, List.of())) {
            try {
                if (wordIn(Files.readString(file), member)) {
                    return true;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return false;
    }

    private static boolean wordIn(String text, String word) {
        return Pattern.compile("(?<![\\w])" + Pattern.quote(word) + "(?![\\w])").matcher(text).find();
    }

    private static void addClassName(String resource) {
        if (resource.endsWith(".class")) {
            String simple = resource.substring(resource.lastIndexOf('/') + 1, resource.length() - ".class".length());
            for (String part : simple.split("\\$")) {
                ON_MODULE_PATH.add(part);
            }
        }
    }

    private static boolean isDoc(Path file) {
        Path rel = ROOT.relativize(file);
        return rel.equals(Path.of("README.md")) || rel.startsWith("docs") && rel.toString().endsWith(".md");
    }

    private static List<Path> docs() throws IOException {
        List<Path> docs = new ArrayList<>();
        docs.add(ROOT.resolve("README.md"));
        try (Stream<Path> files = Files.list(ROOT.resolve("docs"))) {
            files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        return docs;
    }

    /** The repository's text files: what git tracks, without build output. */
    private static List<Path> tracked() throws IOException {
        List<Path> files = new ArrayList<>();
        for (String top : List.of("modules", "deploy", "docs", "bench", "conformance", "packaging", "etc", ".ci", "bin")) {
            Path dir = ROOT.resolve(top);
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> walk = Files.walk(dir)) {
                walk.filter(Files::isRegularFile)
                        .filter(p -> !ROOT.relativize(p).toString().contains("/target/")
                                && !ROOT.relativize(p).startsWith("target"))
                        .filter(DocsNamesTest::isText)
                        .forEach(files::add);
            }
        }
        files.add(ROOT.resolve("README.md"));
        files.add(ROOT.resolve("pom.xml"));
        return files;
    }

    private static boolean isText(Path p) {
        String n = p.getFileName().toString();
        return n.matches(".*\\.(java|md|ya?ml|py|sh|xml|json|txt|properties|toml|conf|example|options|service|tpl"
                + "|cfg|ini)$") || n.equals("Dockerfile") || n.equals("Containerfile") || n.equals("run")
                || !n.contains(".") && p.startsWith(ROOT.resolve("bin"));
    }
}
