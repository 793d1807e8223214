package io.continuum.broker.app.config;

/** Text helpers for messages and checks. */
final class ConfigText {
    private ConfigText() {
    }

    /** Quotes a configured value for a message: at most 80 characters, control characters escaped. */
    static String quote(String v) {
        StringBuilder sb = new StringBuilder("\"");
        int n = Math.min(v.length(), 80);
        for (int i = 0; i < n; i++) {
            char c = v.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                sb.append(String.format("\\x%02x", (int) c));
            } else if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else {
                sb.append(c);
            }
        }
        if (v.length() > n) {
            sb.append("...");
        }
        return sb.append('"').toString();
    }

    static boolean visibleAscii(String v) {
        return !v.isEmpty() && v.chars().allMatch(c -> c >= 0x21 && c <= 0x7e);
    }
}
