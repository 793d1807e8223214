package io.continuum.broker.testing.logs;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A strict logfmt parser for tests: no well-kept Java logfmt parser is published, so this one follows the
 * grammar of go-logfmt's decoder (github.com/go-logfmt/logfmt, {@code decode.go} and the JSON-style
 * unquoting in {@code jsonstring.go}), and is stricter wherever the broker's lines must be:
 * <ul>
 *   <li>one line: a CR or LF anywhere is an error;</li>
 *   <li>pairs are separated by spaces; any other control character outside a quoted value is an error;</li>
 *   <li>a key is one or more characters above space other than {@code =} and {@code "}, and every key has
 *       {@code =} and a non-empty value (go-logfmt accepts a bare key and an empty value);</li>
 *   <li>a bare value is one or more characters above space other than {@code =} and {@code "};</li>
 *   <li>a quoted value knows the escapes {@code \" \\ \/ \' \b \f \n \r \t \}{@code uXXXX} (UTF-16 pairs
 *       joined), no raw control characters, and must be followed by a space or the end of the line;</li>
 *   <li>a key given twice is an error.</li>
 * </ul>
 */
public final class Logfmt {
    private Logfmt() {
    }

    /** A line that is not logfmt, with the 1-based position of the problem. */
    public static final class SyntaxException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        SyntaxException(String line, int pos, String msg) {
            super("logfmt syntax error at pos " + (pos + 1) + ": " + msg + " in: " + line);
        }
    }

    /**
     * Parses one line.
     *
     * @param line the line, without its line terminator
     * @return the pairs in order (values unescaped)
     * @throws SyntaxException when the line is not strict logfmt
     */
    public static Map<String, String> parse(String line) {
        Map<String, String> out = new LinkedHashMap<>();
        int n = line.length();
        int i = 0;
        while (true) {
            while (i < n && line.charAt(i) == ' ') {
                i++;
            }
            if (i >= n) {
                break;
            }
            int start = i;
            while (i < n) {
                char c = line.charAt(i);
                if (c == '=') {
                    break;
                }
                if (c == '"') {
                    throw new SyntaxException(line, i, "unexpected '\"' in a key");
                }
                if (c <= ' ' || c == 0x7f) {
                    throw new SyntaxException(line, i, c == ' ' ? "key without '='" : "control character in a key");
                }
                i++;
            }
            if (i >= n) {
                throw new SyntaxException(line, i, "key without '='");
            }
            if (i == start) {
                throw new SyntaxException(line, i, "unexpected '=' (empty key)");
            }
            String key = line.substring(start, i);
            i++; // '='
            String value;
            if (i < n && line.charAt(i) == '"') {
                StringBuilder sb = new StringBuilder();
                i++;
                boolean closed = false;
                while (i < n) {
                    char c = line.charAt(i);
                    if (c == '"') {
                        closed = true;
                        i++;
                        break;
                    }
                    if (c < ' ') {
                        throw new SyntaxException(line, i, "raw control character in a quoted value");
                    }
                    if (c != '\\') {
                        sb.append(c);
                        i++;
                        continue;
                    }
                    if (i + 1 >= n) {
                        throw new SyntaxException(line, i, "unterminated quoted value");
                    }
                    char e = line.charAt(i + 1);
                    i += 2;
                    switch (e) {
                        case '"', '\\', '/', '\'' -> sb.append(e);
                        case 'b' -> sb.append('\b');
                        case 'f' -> sb.append('\f');
                        case 'n' -> sb.append('\n');
                        case 'r' -> sb.append('\r');
                        case 't' -> sb.append('\t');
                        case 'u' -> {
                            if (i + 4 > n) {
                                throw new SyntaxException(line, i, "short \\u escape");
                            }
                            String hex = line.substring(i, i + 4);
                            if (!hex.chars().allMatch(h -> Character.digit(h, 16) >= 0)) {
                                throw new SyntaxException(line, i, "bad \\u escape");
                            }
                            sb.append((char) Integer.parseInt(hex, 16));
                            i += 4;
                        }
                        default -> throw new SyntaxException(line, i - 1, "invalid escape \\" + e);
                    }
                }
                if (!closed) {
                    throw new SyntaxException(line, i, "unterminated quoted value");
                }
                if (i < n && line.charAt(i) != ' ') {
                    throw new SyntaxException(line, i, "no space after a quoted value");
                }
                value = sb.toString();
            } else {
                int vs = i;
                while (i < n && line.charAt(i) != ' ') {
                    char c = line.charAt(i);
                    if (c == '=' || c == '"') {
                        throw new SyntaxException(line, i, "unexpected '" + c + "' in a bare value");
                    }
                    if (c < ' ' || c == 0x7f) {
                        throw new SyntaxException(line, i, "control character in a bare value");
                    }
                    i++;
                }
                if (i == vs) {
                    throw new SyntaxException(line, i, "empty value of " + key);
                }
                value = line.substring(vs, i);
            }
            if (out.putIfAbsent(key, value) != null) {
                throw new SyntaxException(line, start, "key " + key + " given twice");
            }
        }
        if (out.isEmpty()) {
            throw new SyntaxException(line, 0, "no pairs");
        }
        return Collections.unmodifiableMap(out);
    }
}
