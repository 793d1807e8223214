package io.continuum.broker.metadata.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A plain reading of JSON into a tree, for fuzz oracles: objects keep every member in document
 * order (duplicates included) and the byte length of their text as received. Nesting deeper than
 * {@link #MAX_DEPTH}, or a text that is not UTF-8, ends the reading (the document is then incomplete).
 */
final class Tree {
    static final int MAX_DEPTH = 1_000;

    /**
     * A factory per reading, as the parser has one per pass: Jackson's name table answers a field name
     * it has seen before without decoding its bytes again (an invalid UTF-8 name can match a valid one
     * through the padding of its last four bytes), so a table shared across inputs made this reading
     * accept a name the parser's fresh table rejects.
     */
    private static JsonFactory factory() {
        return JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNameLength(Integer.MAX_VALUE).maxStringLength(Integer.MAX_VALUE)
                        .maxNumberLength(Integer.MAX_VALUE).maxNestingDepth(MAX_DEPTH + 1).build())
                .build();
    }

    private Tree() {
    }

    sealed interface Node {
    }

    record Obj(List<Member> members, long rawBytes) implements Node {
        /** Values of every member with this name, in document order. */
        List<Node> all(String name) {
            List<Node> out = new ArrayList<>();
            for (Member m : members) {
                if (m.name().equals(name)) {
                    out.add(m.value());
                }
            }
            return out;
        }
    }

    record Member(String name, Node value) {
    }

    record Arr(List<Node> items) implements Node {
    }

    record Str(String text) implements Node {
    }

    record Null() implements Node {
    }

    record Other(JsonToken token) implements Node {
    }

    /**
     * The top-level values read before the end or the first error.
     *
     * @param complete true when the input ended cleanly after them
     */
    record Document(List<Node> values, boolean complete) {
    }

    static Document read(byte[] body) {
        List<Node> values = new ArrayList<>();
        try (JsonParser p = factory().createParser(body)) {
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                if (p.currentTokenLocation().getByteOffset() < 0) {
                    return new Document(values, false); // UTF-16 or UTF-32: not JSON as the API server sends it
                }
                values.add(value(p, t, 1));
            }
            return new Document(values, true);
        } catch (IOException | TooDeep e) {
            return new Document(values, false);
        }
    }

    private static final class TooDeep extends RuntimeException {
        private static final long serialVersionUID = 1L;
    }

    private static Node value(JsonParser p, JsonToken t, int depth) throws IOException {
        if (depth > MAX_DEPTH) {
            throw new TooDeep();
        }
        return switch (t) {
            case START_OBJECT -> {
                long start = p.currentTokenLocation().getByteOffset();
                List<Member> members = new ArrayList<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    members.add(new Member(name, value(p, p.nextToken(), depth + 1)));
                }
                long end = p.currentLocation().getByteOffset();
                yield new Obj(members, start < 0 || end < 0 ? Long.MAX_VALUE : end - start);
            }
            case START_ARRAY -> {
                List<Node> items = new ArrayList<>();
                JsonToken item;
                while ((item = p.nextToken()) != JsonToken.END_ARRAY) {
                    items.add(value(p, item, depth + 1));
                }
                yield new Arr(items);
            }
            case VALUE_STRING -> new Str(p.getText());
            case VALUE_NULL -> new Null();
            default -> new Other(t);
        };
    }
}
