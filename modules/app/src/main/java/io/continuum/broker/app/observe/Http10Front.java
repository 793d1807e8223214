package io.continuum.broker.app.observe;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.Supplier;

import io.helidon.common.buffers.DataReader;

/**
 * The bytes of one server connection as Helidon's HTTP/1.1 connection reads them: unchanged, except that a
 * first request with an {@code HTTP/1.0} request line is presented as the equivalent HTTP/1.1 request (see
 * {@link PlainHttp1}). Holds at most {@code maxHeadBytes} of the first request while it decides; a head
 * larger than that, or a first line that is not HTTP/1.0, passes through untouched for Helidon to answer.
 * Used by one connection thread only.
 */
final class Http10Front implements Supplier<byte[]> {
    private static final byte[] HTTP_10_LINE_END = " HTTP/1.0\r".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEAD_END = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private final DataReader source;
    private final int maxHeadBytes;
    private byte[] held = new byte[0];
    private boolean decided;

    Http10Front(DataReader source, int maxHeadBytes) {
        this.source = source;
        this.maxHeadBytes = maxHeadBytes;
    }

    @Override
    public byte[] get() {
        if (decided) {
            return pull();
        }
        while (true) {
            byte[] more;
            try {
                more = pull();
            } catch (DataReader.InsufficientDataAvailableException e) {
                if (held.length == 0) {
                    throw e;
                }
                // The client ended mid-head: Helidon reads what came and ends the connection.
                return release(held);
            }
            held = concat(held, more);
            int lf = indexOf(held, (byte) '\n', 0);
            if (lf < 0) {
                if (held.length > maxHeadBytes) {
                    return release(held);
                }
                continue;
            }
            if (!endsWith(held, lf, HTTP_10_LINE_END)) {
                return release(held);
            }
            int headEnd = indexOf(held, HEAD_END);
            if (headEnd >= 0) {
                int bodyStart = headEnd + HEAD_END.length;
                byte[] head = rewrite(new String(held, 0, bodyStart, StandardCharsets.ISO_8859_1))
                        .getBytes(StandardCharsets.ISO_8859_1);
                return release(concat(head, Arrays.copyOfRange(held, bodyStart, held.length)));
            }
            if (held.length > maxHeadBytes) {
                return release(held);
            }
        }
    }

    /**
     * An HTTP/1.0 request head (request line to the blank line, included) as the equivalent HTTP/1.1 head:
     * version 1.1, {@code Connection: close} added, and {@code Host: localhost} when the request has no Host.
     *
     * @param head request head ending in an empty line
     * @return the rewritten head
     */
    static String rewrite(String head) {
        int lineEnd = head.indexOf("\r\n");
        String requestLine = head.substring(0, lineEnd);
        String fields = head.substring(lineEnd + 2, head.length() - 2); // each field line ends in CRLF
        boolean hasHost = false;
        for (String field : fields.split("\r\n")) {
            if (field.toLowerCase(Locale.ROOT).startsWith("host:")) {
                hasHost = true;
            }
        }
        return requestLine.substring(0, requestLine.length() - "HTTP/1.0".length()) + "HTTP/1.1\r\n"
                + fields
                + (hasHost ? "" : "Host: localhost\r\n")
                + "Connection: close\r\n"
                + "\r\n";
    }

    private byte[] release(byte[] bytes) {
        decided = true;
        held = null;
        return bytes;
    }

    private byte[] pull() {
        source.ensureAvailable();
        return source.readBytes(source.available());
    }

    private static byte[] concat(byte[] a, byte[] b) {
        if (a.length == 0) {
            return b;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(a.length + b.length);
        out.writeBytes(a);
        out.writeBytes(b);
        return out.toByteArray();
    }

    private static int indexOf(byte[] bytes, byte b, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static int indexOf(byte[] bytes, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= bytes.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (bytes[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Whether the bytes just before index {@code end} are {@code suffix}. */
    private static boolean endsWith(byte[] bytes, int end, byte[] suffix) {
        if (end < suffix.length) {
            return false;
        }
        return Arrays.equals(bytes, end - suffix.length, end, suffix, 0, suffix.length);
    }
}
