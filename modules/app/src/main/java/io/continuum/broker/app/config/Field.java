package io.continuum.broker.app.config;

import java.util.Objects;
import java.util.function.Function;

/**
 * One configuration field, declared once in {@link Fields}: its path in the file, its overlay
 * variable, type, default, bounds and description, and how its value is parsed and shown. The
 * loader, the environment overlay, validation, {@code --check-config}'s report and the check of
 * docs/configuration.md and the example file all read this declaration.
 *
 * @param path         e.g. {@code reconnect_backoff.initial}; a {@code .} nests one level
 * @param type         the value's type in words, for the documentation
 * @param presence     required, defaulted, or derived from elsewhere when absent
 * @param defaultValue the default when {@code presence} is {@link Presence#DEFAULT}, else null
 * @param defaultText  the default in words (a value, or where it comes from)
 * @param bounds       the accepted range in words ({@code 1ms..10m}, {@code 1..64 entries}), or empty
 * @param description  what the field is and its rules, Markdown, one line
 * @param parser       text to value
 * @param format       value to text for the effective-configuration report
 * @param <T>          the value's type
 */
public record Field<T>(String path,
                       String type,
                       Presence presence,
                       T defaultValue,
                       String defaultText,
                       String bounds,
                       String description,
                       Parser<T> parser,
                       Function<? super T, String> format) {

    /** Whether a field must be set, has a fixed default, or takes its value from elsewhere. */
    public enum Presence {
        /** Must be set in the file or the environment. */
        REQUIRED,
        /** Takes {@link Field#defaultValue()} when absent. */
        DEFAULT,
        /** When absent, derived from other fields or sources (see the description), or absent. */
        DERIVED
    }

    /**
     * Checks the declaration.
     */
    public Field {
        Objects.requireNonNull(path);
        Objects.requireNonNull(parser);
        Objects.requireNonNull(format);
        if ((presence == Presence.DEFAULT) != (defaultValue != null)) {
            throw new IllegalArgumentException(path + ": a default value goes with presence DEFAULT");
        }
    }

    static <T> Field<T> required(String path, String type, String bounds, String description, Parser<T> parser,
                                 Function<? super T, String> format) {
        return new Field<>(path, type, Presence.REQUIRED, null, "required", bounds, description, parser, format);
    }

    static <T> Field<T> defaulted(String path, String type, T defaultValue, String bounds, String description,
                                  Parser<T> parser, Function<? super T, String> format) {
        return new Field<>(path, type, Presence.DEFAULT, defaultValue, format.apply(defaultValue), bounds,
                           description, parser, format);
    }

    static <T> Field<T> derived(String path, String type, String defaultText, String bounds, String description,
                                Parser<T> parser, Function<? super T, String> format) {
        return new Field<>(path, type, Presence.DERIVED, null, defaultText, bounds, description, parser, format);
    }

    /**
     * The overlay variable: {@code CONTINUUM_EVENT_BROKER_} + the path upper-cased, {@code .} as {@code _}.
     *
     * @return e.g. {@code CONTINUUM_EVENT_BROKER_RECONNECT_BACKOFF_INITIAL}
     */
    public String envName() {
        return ConfigLoader.envName(path);
    }

    /**
     * Whether the field holds a list (comma-separated in its overlay variable).
     *
     * @return true for lists
     */
    public boolean isList() {
        return parser instanceof Parser.ListOf;
    }

    /**
     * The part before the first {@code .}, for nested fields.
     *
     * @return e.g. {@code reconnect_backoff}, or the whole path
     */
    String group() {
        int dot = path.indexOf('.');
        return dot < 0 ? path : path.substring(0, dot);
    }

    /**
     * The key within its group.
     *
     * @return e.g. {@code initial}
     */
    String leaf() {
        return path.substring(path.lastIndexOf('.') + 1);
    }

    @Override
    public String toString() {
        return path;
    }

    // equals and hashCode written out with the record's meaning (equal components), because the generated
    // ones link an invokedynamic bootstrap on first use, which the AOT cache does not keep: every field is a
    // map key while the configuration loads, so that linking was a tenth of the work before /healthz.
    @Override
    public boolean equals(Object o) {
        return o instanceof Field<?> f && path.equals(f.path) && Objects.equals(type, f.type)
                && presence == f.presence && Objects.equals(defaultValue, f.defaultValue)
                && Objects.equals(defaultText, f.defaultText) && Objects.equals(bounds, f.bounds)
                && Objects.equals(description, f.description) && parser.equals(f.parser) && format.equals(f.format);
    }

    @Override
    public int hashCode() {
        return path.hashCode();
    }
}
