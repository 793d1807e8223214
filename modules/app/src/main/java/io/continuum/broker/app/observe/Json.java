package io.continuum.broker.app.observe;

/**
 * Minimal JSON string escaping for the status page and JSON log lines.
 */
public final class Json {
    private Json() {
    }

    /**
     * Appends {@code value} as a JSON string literal (quotes included); control characters,
     * quotes, backslashes and non-ASCII are escaped, so the output is one line of ASCII.
     *
     * @param sb    target
     * @param value value, null renders as {@code null}
     * @return {@code sb}
     */
    public static StringBuilder string(StringBuilder sb, String value) {
        if (value == null) {
            return sb.append("null");
        }
        sb.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"');
    }
}
