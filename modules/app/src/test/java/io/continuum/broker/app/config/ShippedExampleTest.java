package io.continuum.broker.app.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shipped example configuration and docs/configuration.md agree with the field table
 * ({@link Fields}): the docs' field table is the one rendered here, and the example names every
 * field, no other, with its default.
 */
class ShippedExampleTest {
    // Surefire runs with the module directory as working directory.
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent().getParent();
    private static final Path EXAMPLE = ROOT.resolve("etc/config.event-broker.yaml.example");
    private static final Path DOC = ROOT.resolve("docs/configuration.md");
    private static final String BEGIN = "<!-- fields:begin (checked against Fields.java by ShippedExampleTest) -->";
    private static final String END = "<!-- fields:end -->";
    /** A key line of the example, commented out or not: {@code # drain_deadline: 25s}, {@code #   initial: 1s}. */
    private static final Pattern KEY = Pattern.compile("^(# ?)?( *)([a-z_]+):(.*)$");

    @Test
    void theExampleLoads() throws Exception {
        BrokerConfig c = ConfigLoader.create(Map.of("POD_NAMESPACE", "gpu-serving"), Path.of("/nonexistent"))
                .load(EXAMPLE);
        assertEquals("broker-a", c.clientId());
    }

    /** The Markdown table of every field, as docs/configuration.md must hold it. */
    static String fieldTable() {
        StringBuilder sb = new StringBuilder("| field | type | default | bounds | variable | description |\n")
                .append("|---|---|---|---|---|---|\n");
        for (Field<?> f : Fields.ALL) {
            String dflt = switch (f.presence()) {
                case REQUIRED -> "required";
                case DEFAULT -> "`" + f.defaultText() + "`";
                case DERIVED -> f.defaultText();
            };
            sb.append("| `").append(f.path()).append("` | ").append(f.type()).append(" | ").append(dflt)
                    .append(" | ").append(f.bounds()).append(" | `").append(f.envName()).append("` | ")
                    .append(f.description()).append(" |\n");
        }
        return sb.toString();
    }

    @Test
    void theDocsFieldTableIsTheFieldTable() throws Exception {
        String doc = Files.readString(DOC);
        int begin = doc.indexOf(BEGIN);
        int end = doc.indexOf(END);
        assertTrue(begin >= 0 && end > begin, "docs/configuration.md lacks the markers " + BEGIN + " and " + END);
        String table = doc.substring(begin + BEGIN.length(), end).strip() + "\n";
        assertEquals(fieldTable(), table, "docs/configuration.md's field table differs from Fields.java; the table"
                + " rendered from Fields.java is the expected value above");
    }

    @Test
    void theExampleNamesEveryFieldAndNoOtherWithItsDefault() throws Exception {
        List<String> found = new ArrayList<>();
        String group = null;
        for (String line : Files.readAllLines(EXAMPLE)) {
            Matcher m = KEY.matcher(line);
            if (!m.matches()) {
                continue;
            }
            String key = m.group(3);
            String path;
            if (m.group(2).isEmpty()) {
                group = Fields.groups().contains(key) ? key : null;
                path = key;
            } else if (group != null) {
                path = group + "." + key;
            } else {
                continue;
            }
            if (Fields.groups().contains(path)) {
                continue;
            }
            Field<?> f = Fields.byPath(path).orElse(null);
            assertTrue(f != null, "the example names " + path + ", which is no field: " + line);
            found.add(path);
            boolean commented = m.group(1) != null;
            String value = m.group(4).strip();
            switch (f.presence()) {
                case REQUIRED -> assertTrue(!commented, "a required field is set in the example: " + line);
                case DEFAULT -> {
                    assertTrue(commented, "an optional field is shown commented out, at its default: " + line);
                    if (f.parser() instanceof Parser.Scalar<?> scalar) {
                        assertEquals(f.defaultValue(), scalar.parse().apply(value).value(),
                                     "the example shows " + path + "'s default: " + line);
                    }
                }
                case DERIVED -> assertTrue(commented, "a field with a derived default is commented out: " + line);
            }
        }
        assertEquals(Fields.ALL.stream().map(Field::path).toList(), found,
                     "the example lists every field once, in table order");
    }

    @Test
    void noFieldVariableLooksLikeAServiceLink() {
        // Else a field could be mistaken for the kubelet's variables and silently ignored.
        for (Field<?> f : Fields.ALL) {
            for (String value : List.of("10.0.0.1", "9464", "tcp://10.0.0.1:9464", "tcp")) {
                assertTrue(!ServiceLinks.isServiceLink(f.envName(), value), f.envName());
            }
        }
    }
}
