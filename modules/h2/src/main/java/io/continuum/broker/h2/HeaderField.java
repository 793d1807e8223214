package io.continuum.broker.h2;

import java.util.Objects;

/**
 * One field of a header block, pseudo-header fields ({@code :status}, {@code :path}, ...) included, as it is on
 * the wire after HPACK decoding: lower-case name, value, and whether it is sensitive. A sensitive field (a
 * credential) is written as a never-indexed literal (RFC 7541 section 6.2.3): no table of ours, of the peer's or
 * of an intermediary's keeps it, and it is not compressed against other fields. A field read as never-indexed
 * comes back sensitive.
 */
public record HeaderField(String name, String value, boolean sensitive) {
    /** Checks the two are present. */
    public HeaderField {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
    }

    /** A field that is not sensitive. */
    public HeaderField(String name, String value) {
        this(name, value, false);
    }

    /** @return a sensitive field: written never-indexed */
    public static HeaderField sensitive(String name, String value) {
        return new HeaderField(name, value, true);
    }

    /** @return whether this is a pseudo-header field (its name starts with a colon) */
    public boolean pseudo() {
        return name.startsWith(":");
    }

    /** @return the entry size RFC 7541 section 4.1 counts against a dynamic table: octets of both, plus 32 */
    int entrySize() {
        return name.length() + value.length() + 32;
    }
}
