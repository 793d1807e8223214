package io.continuum.broker.app.config;

import java.util.List;

/**
 * The configuration as read, before validation: YAML scalars, sequences and mappings, each with
 * the source it came from (the file, or an environment variable) and its line in the file
 * ({@code 0} where there is none: an environment variable).
 */
sealed interface RawNode {

    /**
     * Where the node came from.
     *
     * @return file path or {@code environment variable NAME}
     */
    String source();

    /**
     * Line in the file where the node starts, 1-based; {@code 0} for a value from the environment.
     *
     * @return line or 0
     */
    int line();

    /**
     * Human name of the node kind for type errors.
     *
     * @return {@code a string}, {@code a list} or {@code a mapping}
     */
    String kind();

    /** A scalar; a YAML null is the empty string (an empty value, never a default). */
    record Scalar(String value, String source, int line) implements RawNode {
        @Override
        public String kind() {
            return "a string";
        }
    }

    record Sequence(List<RawNode> items, String source, int line) implements RawNode {
        public Sequence {
            items = List.copyOf(items);
        }

        @Override
        public String kind() {
            return "a list";
        }
    }

    /** A mapping in file order; keys are unique (the reader reports duplicates and keeps the first). */
    record Mapping(List<Member> members, String source, int line) implements RawNode {
        public Mapping {
            members = List.copyOf(members);
        }

        @Override
        public String kind() {
            return "a mapping";
        }
    }

    /**
     * One key of a mapping.
     *
     * @param key   the key
     * @param line  line of the key
     * @param value the value
     */
    record Member(String key, int line, RawNode value) {
    }
}
