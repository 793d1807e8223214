package io.continuum.broker.h2;

import java.util.Objects;

/**
 * One field of a header block, pseudo-header fields ({@code :status}, {@code :path}, ...) included, as it is on
 * the wire after HPACK decoding: lower-case name, value.
 */
public record HeaderField(String name, String value) {
    /** Checks the two are present. */
    public HeaderField {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
    }

    /** @return whether this is a pseudo-header field (its name starts with a colon) */
    public boolean pseudo() {
        return name.startsWith(":");
    }
}
