package io.continuum.broker.app.config;

import java.io.Serial;
import java.util.List;

/**
 * The configuration is invalid; carries every problem found, not just the first (R-CFG).
 */
public final class ConfigException extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    private final transient List<ConfigProblem> problems;

    /**
     * Creates an exception listing problems.
     *
     * @param problems at least one problem
     */
    public ConfigException(List<ConfigProblem> problems) {
        super(render(problems));
        this.problems = List.copyOf(problems);
    }

    /**
     * Every problem found, in field order.
     *
     * @return problems, never empty
     */
    public List<ConfigProblem> problems() {
        return problems;
    }

    private static String render(List<ConfigProblem> problems) {
        StringBuilder sb = new StringBuilder("invalid configuration (")
                .append(problems.size())
                .append(problems.size() == 1 ? " problem)" : " problems)");
        for (ConfigProblem p : problems) {
            sb.append(System.lineSeparator()).append("  ").append(p);
        }
        return sb.toString();
    }
}
