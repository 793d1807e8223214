package io.continuum.broker.app.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The environment overlay: {@code CONTINUUM_EVENT_BROKER_} + a field's path upper-cased with
 * {@code .} as {@code _} replaces the file's value. A list is comma-separated, items trimmed; an
 * empty value for a list is an error (it would otherwise silently replace the file's list with
 * nothing) and {@code []} is the explicit empty list. Any other variable with the prefix is an
 * error, except the reserved ones (the default credential variable, the launcher's JVM options, the
 * variable {@code credential_env} names) and the kubelet's service-link variables.
 */
final class EnvironmentOverlay {
    /** The value that sets a list field to the empty list. */
    static final String EMPTY_LIST = "[]";

    private EnvironmentOverlay() {
    }

    /**
     * Applies the environment over the file's values.
     *
     * @param environment variables
     * @param raw         field path to value, updated in place
     * @param problems    where problems go
     */
    static void apply(Map<String, String> environment, Map<String, RawNode> raw, Problems problems) {
        Map<String, Field<?>> byEnvName = new TreeMap<>();
        for (Field<?> f : Fields.ALL) {
            byEnvName.put(f.envName(), f);
        }
        // credential_env may itself be overlaid; the variable it names is reserved.
        String credentialEnvName = environment.get(Fields.CREDENTIAL_ENV.envName());
        if (credentialEnvName == null && raw.get(Fields.CREDENTIAL_ENV.path()) instanceof RawNode.Scalar s) {
            credentialEnvName = s.value();
        }
        for (var e : new TreeMap<>(environment).entrySet()) {
            String name = e.getKey();
            if (!name.startsWith(ConfigLoader.ENV_PREFIX) || name.equals(CredentialLocation.DEFAULT_ENV)
                    || name.equals(ConfigLoader.JAVA_OPTS_ENV) || name.equals(credentialEnvName)) {
                continue;
            }
            String source = "environment variable " + name;
            Field<?> field = byEnvName.get(name);
            String value = e.getValue();
            if (field == null) {
                if (!ServiceLinks.isServiceLink(name, value)) {
                    problems.add(source, 0, "(environment)", "names no configuration field (fields map to "
                            + ConfigLoader.ENV_PREFIX + "<FIELD_PATH> with '.' as '_', e.g. "
                            + Fields.BUS_URL.envName() + ")");
                }
                continue;
            }
            if (!field.isList()) {
                raw.put(field.path(), new RawNode.Scalar(value, source, 0));
            } else if (value.strip().equals(EMPTY_LIST)) {
                raw.put(field.path(), new RawNode.Sequence(List.of(), source, 0));
            } else if (value.isBlank()) {
                problems.add(source, 0, field.path(), "is empty; an empty variable would replace the file's list"
                        + " with nothing: write " + EMPTY_LIST + " for the empty list, or unset the variable to keep"
                        + " the file's value");
                // The file's value stays in place: the load fails on this problem, without a second one.
            } else {
                List<RawNode> items = new ArrayList<>();
                for (String item : value.split(",", -1)) {
                    items.add(new RawNode.Scalar(item.strip(), source, 0));
                }
                raw.put(field.path(), new RawNode.Sequence(items, source, 0));
            }
        }
    }
}
