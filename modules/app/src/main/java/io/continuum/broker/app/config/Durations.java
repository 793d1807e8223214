package io.continuum.broker.app.config;

import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as R-CFG spells them: a whole number and a unit {@code ms}, {@code s}, {@code m} or
 * {@code h}, at least {@code 1ms}. No sign, no fraction, no spaces, no compound forms.
 */
public final class Durations {
    private static final Pattern FORM = Pattern.compile("([0-9]{1,12})(ms|s|m|h)");

    private Durations() {
    }

    /**
     * Parses a duration.
     *
     * @param text text such as {@code 250ms}
     * @return the duration, or empty when the text is not a valid duration of at least 1 ms
     */
    public static Optional<Duration> parse(String text) {
        Matcher m = FORM.matcher(text);
        if (!m.matches()) {
            return Optional.empty();
        }
        long n = Long.parseLong(m.group(1));
        Duration d = switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> throw new IllegalStateException("unreachable");
        };
        return d.isZero() ? Optional.empty() : Optional.of(d);
    }

    /**
     * Formats a duration in the same syntax, with the largest unit that keeps it whole.
     *
     * @param d a positive duration with whole milliseconds
     * @return text such as {@code 25s}
     */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }
}
