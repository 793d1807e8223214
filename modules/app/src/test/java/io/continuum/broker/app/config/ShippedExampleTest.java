package io.continuum.broker.app.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shipped example configuration is valid, and it and docs/configuration.md document every field.
 */
class ShippedExampleTest {
    // Surefire runs with the module directory as working directory.
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent().getParent();
    private static final Path EXAMPLE = ROOT.resolve("etc/config.event-broker.yaml.example");
    private static final Path DOC = ROOT.resolve("docs/configuration.md");

    @Test
    void theExampleLoads() throws Exception {
        BrokerConfig c = ConfigLoader.create(Map.of("POD_NAMESPACE", "gpu-serving"), Path.of("/nonexistent"))
                .load(EXAMPLE);
        assertEquals("broker-a", c.clientId());
    }

    @Test
    void everyFieldIsDocumentedInTheExampleAndTheDocs() throws Exception {
        String example = Files.readString(EXAMPLE);
        String doc = Files.readString(DOC);
        for (String field : ConfigLoader.FIELDS) {
            String leaf = field.substring(field.lastIndexOf('.') + 1);
            assertTrue(example.contains(leaf + ":"), "example lacks " + field);
            assertTrue(doc.contains("`" + field + "`"), "docs lack " + field);
        }
    }
}
