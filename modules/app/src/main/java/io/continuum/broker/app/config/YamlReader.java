package io.continuum.broker.app.config;

import java.io.StringReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Reads the configuration text into a {@link RawNode} tree that keeps each node's line. SnakeYAML's
 * composer gives the node graph with positions and constructs no Java objects (no tags are
 * resolved into types, so every scalar stays the text the operator wrote). Duplicate keys, which
 * a map-building reader silently resolves to the last one, are reported with both lines.
 */
final class YamlReader {
    /** Deepest nesting copied; fields nest two levels, lists of strings one more. Also bounds alias cycles. */
    static final int MAX_DEPTH = 16;

    private final String source;
    private final Problems problems;

    private YamlReader(String source, Problems problems) {
        this.source = source;
        this.problems = problems;
    }

    /**
     * Parses one YAML document.
     *
     * @param text     the file's text
     * @param source   the file, for problems
     * @param problems where problems go
     * @return the tree (an empty mapping for an empty document), or empty when the text is not YAML
     */
    static Optional<RawNode> read(String text, String source, Problems problems) {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(true); // reported here, with both lines
        options.setMaxAliasesForCollections(50);
        options.setNestingDepthLimit(MAX_DEPTH * 2);
        Node root;
        try {
            root = new Yaml(options).compose(new StringReader(text));
        } catch (MarkedYAMLException e) {
            Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            problems.add(source, mark == null ? 0 : mark.getLine() + 1, "(file)",
                         "is not valid YAML: " + describe(e));
            return Optional.empty();
        } catch (YAMLException e) {
            problems.add(source, 0, "(file)", "is not valid YAML: " + firstLine(e.getMessage()));
            return Optional.empty();
        } catch (RuntimeException e) {
            // SnakeYAML's composer also throws plain exceptions for some malformed input, e.g. an
            // IllegalArgumentException for a tag whose %-escape decodes to a space (found by
            // ConfigLoaderFuzzTest): any failure to read the text is a problem with the file.
            problems.add(source, 0, "(file)", "is not valid YAML: " + firstLine(e.getMessage()));
            return Optional.empty();
        }
        if (root == null) {
            return Optional.of(new RawNode.Mapping(List.of(), source, 1));
        }
        return Optional.of(new YamlReader(source, problems).convert(root, "(file)", 0));
    }

    private RawNode convert(Node node, String path, int depth) {
        int line = node.getStartMark() == null ? 0 : node.getStartMark().getLine() + 1;
        return switch (node) {
            case ScalarNode s -> new RawNode.Scalar(Tag.NULL.equals(s.getTag()) ? "" : s.getValue(), source, line);
            case SequenceNode seq -> {
                List<RawNode> items = new ArrayList<>();
                for (Node item : seq.getValue()) {
                    if (depth >= MAX_DEPTH) {
                        problems.add(source, line, path, "nests deeper than any configuration field");
                        break;
                    }
                    items.add(convert(item, path + "[" + items.size() + "]", depth + 1));
                }
                yield new RawNode.Sequence(items, source, line);
            }
            case MappingNode map -> new RawNode.Mapping(members(map, path, depth), source, line);
            default -> {
                problems.add(source, line, path, "holds a YAML node of an unknown kind");
                yield new RawNode.Mapping(List.of(), source, line);
            }
        };
    }

    private List<RawNode.Member> members(MappingNode map, String path, int depth) {
        List<RawNode.Member> members = new ArrayList<>();
        Map<String, Integer> firstLine = new HashMap<>();
        for (NodeTuple t : map.getValue()) {
            Node keyNode = t.getKeyNode();
            int keyLine = keyNode.getStartMark() == null ? 0 : keyNode.getStartMark().getLine() + 1;
            if (!(keyNode instanceof ScalarNode k) || Tag.NULL.equals(k.getTag())) {
                problems.add(source, keyLine, path, "holds a key that is not a string");
                continue;
            }
            String key = k.getValue();
            String childPath = path.equals("(file)") ? key : path + "." + key;
            Integer earlier = firstLine.putIfAbsent(key, keyLine);
            if (earlier != null) {
                problems.add(source, keyLine, childPath, duplicate(key, earlier, keyLine));
                continue;
            }
            if (depth >= MAX_DEPTH) {
                problems.add(source, keyLine, path, "nests deeper than any configuration field");
                break;
            }
            members.add(new RawNode.Member(key, keyLine, convert(t.getValueNode(), childPath, depth + 1)));
        }
        return members;
    }

    /** The message for a key given twice; also used for a field given in both nested and dotted form. */
    static String duplicate(String key, int firstLine, int secondLine) {
        return "duplicate key " + ConfigText.quote(key) + " at lines " + firstLine + " and " + secondLine
                + " (each field may be set once)";
    }

    private static String describe(MarkedYAMLException e) {
        String problem = e.getProblem() == null ? "parse error" : e.getProblem();
        return e.getContext() == null ? firstLine(problem) : firstLine(e.getContext()) + ": " + firstLine(problem);
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "parse error";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
