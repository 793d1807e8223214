package io.continuum.broker.app.config;

import java.util.ArrayList;
import java.util.List;

/** Problems collected while reading, overlaying and validating, so one run reports all of them. */
final class Problems {
    private final List<ConfigProblem> list = new ArrayList<>();

    void add(String source, int line, String field, String message) {
        list.add(new ConfigProblem(source, line, field, message));
    }

    /** A problem with a node's value: located where the node came from. */
    void at(RawNode node, String field, String message) {
        add(node.source(), node.line(), field, message);
    }

    boolean isEmpty() {
        return list.isEmpty();
    }

    List<ConfigProblem> list() {
        return List.copyOf(list);
    }
}
