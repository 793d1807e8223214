package io.continuum.broker.testing.logs;

import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;

/**
 * Parses one JSON log line with Jackson, strictly: exactly one flat object of strings, numbers, booleans
 * and nulls, no key twice, nothing after it.
 */
public final class JsonLine {
    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private JsonLine() {
    }

    /**
     * Parses a line.
     *
     * @param line the line, without its line terminator
     * @return the members in order: String, Long, Boolean or null values
     * @throws IllegalArgumentException when the line is not one flat JSON object
     */
    public static Map<String, Object> parse(String line) {
        Map<String, Object> out = new LinkedHashMap<>();
        try (JsonParser p = JSON.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalArgumentException("not a JSON object: " + line);
            }
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                Object value = switch (p.nextToken()) {
                    case VALUE_STRING -> p.getText();
                    case VALUE_NUMBER_INT -> p.getLongValue();
                    case VALUE_TRUE -> Boolean.TRUE;
                    case VALUE_FALSE -> Boolean.FALSE;
                    case VALUE_NULL -> null;
                    default -> throw new IllegalArgumentException("not a flat value at " + key + ": " + line);
                };
                out.put(key, value);
            }
            if (t != JsonToken.END_OBJECT || p.nextToken() != null) {
                throw new IllegalArgumentException("trailing content: " + line);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("not JSON (" + e.getMessage() + "): " + line, e);
        }
        return Collections.unmodifiableMap(out);
    }
}
