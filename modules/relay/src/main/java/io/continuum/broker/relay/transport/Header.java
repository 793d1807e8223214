package io.continuum.broker.relay.transport;

import java.util.Locale;
import java.util.Objects;

/**
 * One header. A sensitive header (and {@code authorization} always) is encoded never-indexed in
 * HPACK and its value never appears in {@link #toString()}.
 *
 * @param name      lower-case name
 * @param value     value
 * @param sensitive encode never-indexed and never print the value
 */
public record Header(String name, String value, boolean sensitive) {
    /** Normalises the name to lower case; {@code authorization} is always sensitive. */
    public Header {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
        name = name.toLowerCase(Locale.ROOT);
        sensitive = sensitive || "authorization".equals(name);
    }

    /**
     * @param name  name
     * @param value value
     * @return a non-sensitive header
     */
    public static Header of(String name, String value) {
        return new Header(name, value, false);
    }

    /**
     * @param credential the bearer credential
     * @return {@code authorization: Bearer <credential>}, sensitive
     */
    public static Header bearer(String credential) {
        return new Header("authorization", "Bearer " + credential, true);
    }

    @Override
    public String toString() {
        return name + ": " + (sensitive ? "<redacted>" : value);
    }
}
