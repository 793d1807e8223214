package io.continuum.broker.h2;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.code_intelligence.jazzer.junit.FuzzTest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Coverage-guided fuzzing of the HTTP/2 reader with the HPACK decoder behind it (RFC 9113 section 4, RFC 7541;
 * docs/reliability.md, "Fuzzing"): the bytes a hostile or merely unusual peer could send after its preface. The
 * contract asserted, for every input:
 * <ol>
 *     <li>each read hands over one frame, reports the end of the stream, or throws an {@link Http2Error} (or an
 *     {@link EOFException} inside a frame): any other exception escapes and is a finding;</li>
 *     <li>reading terminates: every call that returns consumes at least one frame header, so the calls are bounded
 *     by the input's length (and a loop inside one call, Helidon's table's failure, would hang the target, which
 *     Jazzer reports);</li>
 *     <li>after a stream error the next frame is read; a connection error ends the reading;</li>
 *     <li>no header block handed over holds more than the header list limit (RFC 9113 section 6.5.2, name + value
 *     + 32 per field), and every field name of a block comes from the block or a table;</li>
 *     <li>the outcome (the frames, then the error) is the same whether the bytes arrive at once or in reads of a
 *     few bytes each.</li>
 * </ol>
 * Input layout: byte 0 chooses the size of the small reads (1 to 64), byte 1 the header list limit (64 KiB, 100,
 * 4,096 or 0) and our SETTINGS_HEADER_TABLE_SIZE (4,096, 0, 256 or 100), the rest is the frame stream. Seeds and every
 * past finding live in {@code src/test/resources/io/continuum/broker/h2/Http2ReaderFuzzTestInputs/reader/}.
 */
class Http2ReaderFuzzTest {
    private static final long[] LIST_LIMITS = {Http2Reader.DEFAULT_MAX_HEADER_LIST_SIZE, 100, 4_096, 0};
    private static final long[] TABLE_SIZES = {4_096, 0, 256, 100};

    @FuzzTest(maxDuration = "15s")
    void reader(byte[] input) {
        if (input.length < 2) {
            return;
        }
        int readSize = 1 + (input[0] & 0x3F);
        long listLimit = LIST_LIMITS[input[1] & 0x3];
        long tableSize = TABLE_SIZES[(input[1] >> 2) & 0x3];
        byte[] stream = java.util.Arrays.copyOfRange(input, 2, input.length);

        List<String> whole = read(new ByteArrayInputStream(stream), stream.length, listLimit, tableSize);
        List<String> trickled = read(new Trickle(stream, readSize), stream.length, listLimit, tableSize);
        assertEquals(whole, trickled, "the same frames and error in reads of " + readSize + " bytes");
    }

    private static List<String> read(InputStream in, int length, long listLimit, long tableSize) {
        Recording handler = new Recording(listLimit);
        Http2Reader reader = new Http2Reader(in, handler);
        reader.maxHeaderListSize(listLimit);
        reader.headerTableSize(tableSize);
        int calls = 0;
        while (true) {
            // every call that does not end the reading took a 9-byte frame header off the stream
            assertTrue(++calls <= length / 9 + 1, "more reads than frames fit in " + length + " bytes");
            try {
                if (!reader.nextFrame()) {
                    handler.seen.add("END");
                    return handler.seen;
                }
            } catch (Http2Error e) {
                switch (e) {
                    case Http2Error.StreamError s -> handler.seen.add("STREAM_ERROR " + s.streamId() + " " + s.code());
                    case Http2Error.ConnectionError c -> {
                        handler.seen.add("CONNECTION_ERROR " + c.code());
                        return handler.seen;
                    }
                }
            } catch (EOFException e) {
                handler.seen.add("EOF");
                return handler.seen;
            } catch (IOException e) {
                throw new AssertionError("a byte array stream does not fail", e);
            }
        }
    }

    /** Writes down what each frame was; checks each header block against the limit. */
    private static final class Recording implements FrameHandler {
        final List<String> seen = new ArrayList<>();
        final long listLimit;

        Recording(long listLimit) {
            this.listLimit = listLimit;
        }

        @Override
        public void data(int streamId, boolean endStream, ByteBuffer data, int flowControlled) {
            seen.add("DATA " + streamId + " " + endStream + " " + data.remaining() + "/" + flowControlled);
        }

        @Override
        public void headers(int streamId, boolean endStream, List<HeaderField> fields) {
            long size = 0;
            for (HeaderField f : fields) {
                size += f.entrySize();
            }
            assertTrue(size <= listLimit, "a block of " + size + " octets went past the limit " + listLimit);
            seen.add("HEADERS " + streamId + " " + endStream + " " + fields);
        }

        @Override
        public void priority(int streamId, int dependency, int weight, boolean exclusive) {
            seen.add("PRIORITY " + streamId + " " + dependency + " " + weight + " " + exclusive);
        }

        @Override
        public void rstStream(int streamId, int errorCode) {
            seen.add("RST_STREAM " + streamId + " " + errorCode);
        }

        @Override
        public void settings(boolean ack, Map<Integer, Long> settings) {
            seen.add("SETTINGS " + ack + " " + settings);
        }

        @Override
        public void ping(boolean ack, long payload) {
            seen.add("PING " + ack + " " + payload);
        }

        @Override
        public void goAway(int lastStreamId, int errorCode, byte[] debugData) {
            seen.add("GOAWAY " + lastStreamId + " " + errorCode + " " + debugData.length);
        }

        @Override
        public void windowUpdate(int streamId, int increment) {
            seen.add("WINDOW_UPDATE " + streamId + " " + increment);
        }

        @Override
        public void unknown(int type, int flags, int streamId, byte[] payload) {
            seen.add("UNKNOWN " + type + " " + flags + " " + streamId + " " + payload.length);
        }
    }

    /** The bytes in reads of at most {@code size} each, as a socket may deliver them. */
    private static final class Trickle extends InputStream {
        private final byte[] bytes;
        private final int size;
        private int at;

        Trickle(byte[] bytes, int size) {
            this.bytes = bytes;
            this.size = size;
        }

        @Override
        public int read() {
            return at < bytes.length ? bytes[at++] & 0xFF : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (len == 0) {
                return 0;
            }
            if (at >= bytes.length) {
                return -1;
            }
            int n = Math.min(Math.min(len, size), bytes.length - at);
            System.arraycopy(bytes, at, b, off, n);
            at += n;
            return n;
        }
    }
}
