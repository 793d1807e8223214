package io.continuum.broker.protocol;

/**
 * Strict UTF-8 check of a frame payload before JSON parsing (bus-protocol-v1.md section 3).
 * <p>
 * Rejects what RFC 3629 forbids (stray continuation bytes, overlong forms, UTF-16 surrogates,
 * code points above U+10FFFF, truncated sequences), a leading byte order mark, and raw C0 control
 * characters other than TAB, LF and CR (JSON allows them nowhere unescaped). The last two rules
 * also guarantee that Jackson's encoding detection can only ever see UTF-8: it needs a BOM or a
 * zero byte to pick UTF-16 or UTF-32.
 */
final class Utf8 {
    private Utf8() {
    }

    /**
     * Checks {@code len} bytes at {@code off}.
     *
     * @param off first byte of the payload
     * @throws ProtocolException at the first offending byte; offsets count from the payload start
     */
    static void check(byte[] b, int off, int len) throws ProtocolException {
        int end = off + len;
        if (len >= 3 && b[off] == (byte) 0xEF && b[off + 1] == (byte) 0xBB && b[off + 2] == (byte) 0xBF) {
            throw new ProtocolException("invalid JSON at byte 0: byte order mark");
        }
        int i = off;
        while (i < end) {
            int c = b[i];
            if (c >= 0) {
                if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
                    throw new ProtocolException("invalid JSON at byte " + (i - off) + ": control character 0x"
                            + Character.forDigit(c >> 4, 16) + Character.forDigit(c & 0xF, 16));
                }
                i++;
                continue;
            }
            c &= 0xFF;
            int need;
            int lo = 0x80;
            int hi = 0xBF;
            if (c >= 0xC2 && c <= 0xDF) {
                need = 1;
            } else if (c >= 0xE0 && c <= 0xEF) {
                need = 2;
                if (c == 0xE0) {
                    lo = 0xA0; // no overlong forms
                } else if (c == 0xED) {
                    hi = 0x9F; // no surrogates
                }
            } else if (c >= 0xF0 && c <= 0xF4) {
                need = 3;
                if (c == 0xF0) {
                    lo = 0x90; // no overlong forms
                } else if (c == 0xF4) {
                    hi = 0x8F; // nothing above U+10FFFF
                }
            } else {
                throw invalid(i - off);
            }
            if (end - i <= need) {
                throw invalid(i - off);
            }
            int second = b[i + 1] & 0xFF;
            if (second < lo || second > hi) {
                throw invalid(i - off);
            }
            for (int k = 2; k <= need; k++) {
                int next = b[i + k] & 0xFF;
                if (next < 0x80 || next > 0xBF) {
                    throw invalid(i - off);
                }
            }
            i += need + 1;
        }
    }

    private static ProtocolException invalid(int at) {
        return new ProtocolException("invalid UTF-8 at byte " + at);
    }
}
