package io.continuum.broker.app.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The configuration as read, before validation: YAML scalars, sequences and mappings, each with
 * the source it came from (the file, or an environment variable).
 */
sealed interface RawNode {

    /**
     * Where the node came from.
     *
     * @return file path or {@code environment variable NAME}
     */
    String source();

    /**
     * Human name of the node kind for type errors.
     *
     * @return {@code a string}, {@code a list} or {@code a mapping}
     */
    String kind();

    record Scalar(String value, String source) implements RawNode {
        @Override
        public String kind() {
            return "a string";
        }
    }

    record Sequence(List<RawNode> items, String source) implements RawNode {
        public Sequence {
            items = List.copyOf(items);
        }

        @Override
        public String kind() {
            return "a list";
        }
    }

    record Mapping(Map<String, RawNode> fields, String source) implements RawNode {
        public Mapping {
            fields = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(fields));
        }

        @Override
        public String kind() {
            return "a mapping";
        }
    }
}
