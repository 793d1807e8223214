package io.continuum.broker.app.config;

import java.util.List;
import java.util.function.Function;

/**
 * How a field's raw value becomes its typed value: a scalar parsed from its text, or a list of
 * scalars with bounds on the number of entries. A parse either yields a value or a message saying
 * what is wrong (never both).
 *
 * @param <T> the field's type
 */
sealed interface Parser<T> {

    /**
     * The outcome of parsing one text.
     *
     * @param value   the value, or null
     * @param problem what is wrong, or null
     * @param <T>     type
     */
    record Result<T>(T value, String problem) {
        static <T> Result<T> ok(T value) {
            return new Result<>(value, null);
        }

        static <T> Result<T> problem(String message) {
            return new Result<>(null, message);
        }
    }

    /**
     * A scalar field.
     *
     * @param parse text (non-empty) to value or problem
     * @param <T>   type
     */
    record Scalar<T>(Function<String, Result<T>> parse) implements Parser<T> {
    }

    /**
     * A list field: {@code min..max} distinct non-empty entries, each parsed by {@code element}; a
     * value listed twice is an error, entries equal after parsing (a normalised CIDR) are kept once.
     *
     * @param min     fewest entries
     * @param max     most entries
     * @param element entry text to value or problem
     * @param <E>     entry type
     */
    record ListOf<E>(int min, int max, Function<String, Result<E>> element) implements Parser<List<E>> {
    }
}
