package io.continuum.broker.h2;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What makes a response's header block malformed (RFC 9113 sections 8.1, 8.2, 8.3.2), the client role's rules: a
 * malformed response is a stream error (PROTOCOL_ERROR) on its stream alone (section 8.1.1). The codec decodes any
 * block HPACK allows; what HTTP/2 allows in one is checked here, by the party that reads responses.
 */
public final class ResponseFieldRules {
    /** Section 8.2.2: fields that are connection-specific in HTTP/1.1 have no place in HTTP/2. */
    private static final Set<String> CONNECTION_SPECIFIC = Set.of("connection", "proxy-connection", "keep-alive",
            "transfer-encoding", "upgrade");

    private ResponseFieldRules() {
    }

    /**
     * A response head, informational (1xx) or final: exactly one {@code :status} of three digits, before every
     * regular field, no other pseudo-header field, and regular fields that are well formed.
     *
     * @return what is wrong, or empty when the head is well formed
     */
    public static Optional<String> headViolation(List<HeaderField> fields) {
        boolean status = false;
        boolean regularSeen = false;
        for (HeaderField f : fields) {
            if (f.pseudo()) {
                if (!f.name().equals(":status")) {
                    return Optional.of("pseudo-header field " + f.name() + " in a response (RFC 9113 section 8.3.2)");
                }
                if (status) {
                    return Optional.of(":status repeated (RFC 9113 section 8.3)");
                }
                if (regularSeen) {
                    return Optional.of(":status after a regular field (RFC 9113 section 8.3)");
                }
                if (!threeDigits(f.value())) {
                    return Optional.of(":status is not three digits (RFC 9113 section 8.3.2)");
                }
                status = true;
                continue;
            }
            regularSeen = true;
            Optional<String> violation = regularViolation(f);
            if (violation.isPresent()) {
                return violation;
            }
        }
        return status ? Optional.empty() : Optional.of("no :status in the response head (RFC 9113 section 8.3.2)");
    }

    /**
     * Trailers: regular fields only (section 8.1), each well formed.
     *
     * @return what is wrong, or empty when they are well formed
     */
    public static Optional<String> trailersViolation(List<HeaderField> fields) {
        for (HeaderField f : fields) {
            if (f.pseudo()) {
                return Optional.of("pseudo-header field " + f.name() + " in trailers (RFC 9113 section 8.1)");
            }
            Optional<String> violation = regularViolation(f);
            if (violation.isPresent()) {
                return violation;
            }
        }
        return Optional.empty();
    }

    /** @return whether {@code status} is informational (1xx): more heads follow (section 8.1) */
    public static boolean informational(int status) {
        return status >= 100 && status < 200;
    }

    private static Optional<String> regularViolation(HeaderField f) {
        String name = f.name();
        if (name.isEmpty()) {
            return Optional.of("empty field name (RFC 9113 section 8.2.1)");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                return Optional.of("upper-case field name " + printable(name) + " (RFC 9113 section 8.2.1)");
            }
            if (c <= 0x20 || c >= 0x7F || c == ':') {
                return Optional.of("field name " + printable(name) + " holds a character RFC 9113 section 8.2.1"
                        + " forbids");
            }
        }
        if (CONNECTION_SPECIFIC.contains(name) || name.equals("te") && !f.value().equals("trailers")) {
            return Optional.of("connection-specific field " + name + " (RFC 9113 section 8.2.2)");
        }
        String value = f.value();
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == 0 || c == '\r' || c == '\n') {
                return Optional.of("value of " + name + " holds NUL, CR or LF (RFC 9113 section 8.2.1)");
            }
        }
        if (!value.isEmpty() && (isSpace(value.charAt(0)) || isSpace(value.charAt(value.length() - 1)))) {
            return Optional.of("value of " + name + " begins or ends with whitespace (RFC 9113 section 8.2.1)");
        }
        return Optional.empty();
    }

    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t';
    }

    private static boolean threeDigits(String s) {
        return s.length() == 3 && digit(s.charAt(0)) && digit(s.charAt(1)) && digit(s.charAt(2));
    }

    private static boolean digit(char c) {
        return c >= '0' && c <= '9';
    }

    /** The name as a log line may show it: at most 64 characters, control characters escaped. */
    private static String printable(String name) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < Math.min(name.length(), 64); i++) {
            char c = name.charAt(i);
            b.append(c < 0x20 || c >= 0x7F ? String.format("\\x%02x", (int) c) : String.valueOf(c));
        }
        return name.length() > 64 ? b + "..." : b.toString();
    }
}
