package io.continuum.broker.h2;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;


/**
 * Reads HTTP/2 frames (RFC 9113 section 4) from a stream, parsing each byte once, and hands each whole frame to a
 * {@link FrameHandler}: padding removed, a header block reassembled from HEADERS and its CONTINUATIONs and decoded
 * with this reader's HPACK table. Frame-level rules are checked here and reported as a typed {@link Http2Error}
 * (a connection error ends the reading; after a stream error the next frame can be read): frame size against the
 * local SETTINGS_MAX_FRAME_SIZE, fixed lengths, padding, stream id 0 or not per type, CONTINUATION only right after
 * a HEADERS (or CONTINUATION) without END_HEADERS on the same stream, zero window increments, SETTINGS values,
 * SETTINGS as the peer's first frame ({@link #expectSettingsFirst}), the header list limit. Rules that depend on the endpoint's role
 * (which streams it opened, what a server may set) are its handler's. One thread reads.
 */
public final class Http2Reader {
    /** RFC 9113 section 3.4: what a client sends first. */
    public static final byte[] CLIENT_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    /** RFC 9113 section 4.2: SETTINGS_MAX_FRAME_SIZE starts at, and may not go below, 16,384. */
    public static final int DEFAULT_MAX_FRAME_SIZE = 16_384;
    /** The most a reassembled header block may hold: a peer that keeps sending CONTINUATION is refused. */
    public static final int MAX_HEADER_BLOCK_BYTES = 256 * 1024;
    /**
     * SETTINGS_MAX_HEADER_LIST_SIZE this codec's endpoints advertise and enforce unless told otherwise: 64 KiB of
     * decoded header list (RFC 9113 section 6.5.2). A bus response head is a status and a content type; 64 KiB
     * leaves room for what proxies in front of a router add (Netty's default is 8 KiB). Without a limit, a block of
     * one-octet references to a 4 KiB table entry would decode to thousands of times its size.
     */
    public static final long DEFAULT_MAX_HEADER_LIST_SIZE = 64 * 1024;
    /**
     * Empty CONTINUATION frames one header block may carry: they change nothing, and a run of them is a way to make
     * a reader spend (RFC 9113 section 10.5); the next is ENHANCE_YOUR_CALM. As Netty bounds empty DATA frames (2).
     */
    public static final int MAX_EMPTY_CONTINUATIONS = 2;

    private static final int DATA = Http2.TYPE_DATA;
    private static final int HEADERS = Http2.TYPE_HEADERS;
    private static final int PRIORITY = Http2.TYPE_PRIORITY;
    private static final int RST_STREAM = Http2.TYPE_RST_STREAM;
    private static final int SETTINGS = Http2.TYPE_SETTINGS;
    private static final int PUSH_PROMISE = Http2.TYPE_PUSH_PROMISE;
    private static final int PING = Http2.TYPE_PING;
    private static final int GOAWAY = Http2.TYPE_GOAWAY;
    private static final int WINDOW_UPDATE = Http2.TYPE_WINDOW_UPDATE;
    private static final int CONTINUATION = Http2.TYPE_CONTINUATION;
    private static final int END_STREAM = Http2.FLAG_END_STREAM;
    private static final int ACK = Http2.FLAG_ACK;
    private static final int END_HEADERS = Http2.FLAG_END_HEADERS;
    private static final int PADDED = Http2.FLAG_PADDED;
    private static final int PRIORITY_FLAG = Http2.FLAG_PRIORITY;

    private final DataInputStream in;
    private final FrameHandler handler;
    private final HpackDecoder hpack = new HpackDecoder();
    private final byte[] header = new byte[9];
    private int maxFrameSize = DEFAULT_MAX_FRAME_SIZE;
    private long maxHeaderListSize = DEFAULT_MAX_HEADER_LIST_SIZE;
    private byte[] dataBuffer = new byte[DEFAULT_MAX_FRAME_SIZE];
    // a header block under way: its stream, END_STREAM of its HEADERS, the fragments so far
    private int blockStream;
    private boolean blockEndStream;
    private byte[] block;
    private int blockLength;
    /** A stream error the open block's HEADERS carried (a self-dependency): reported once the block is decoded. */
    private Http2Error.StreamError blockError;
    private int blockEmptyContinuations;
    /** Whether the peer's first frame must be SETTINGS, and whether it came (RFC 9113 section 3.4). */
    private boolean settingsFirst;
    private boolean settingsSeen;

    /**
     * @param in      the connection's bytes, after the preface (see {@link #readClientPreface})
     * @param handler where frames go
     */
    public Http2Reader(InputStream in, FrameHandler handler) {
        this.in = in instanceof DataInputStream d ? d : new DataInputStream(in);
        this.handler = handler;
    }

    /** Reads and checks the client connection preface (a server's first read). */
    public static void readClientPreface(InputStream in) throws IOException, Http2Error {
        byte[] preface = new byte[CLIENT_PREFACE.length];
        new DataInputStream(in).readFully(preface);
        if (!Arrays.equals(preface, CLIENT_PREFACE)) {
            throw new Http2Error.ConnectionError(ErrorCode.PROTOCOL_ERROR, "not the HTTP/2 client preface");
        }
    }

    /** This endpoint's SETTINGS_MAX_FRAME_SIZE, once the peer acknowledged it: longer frames are errors. */
    public void maxFrameSize(int bytes) {
        if (bytes < DEFAULT_MAX_FRAME_SIZE || bytes > 0xFF_FFFF) {
            throw new IllegalArgumentException("SETTINGS_MAX_FRAME_SIZE out of range: " + bytes);
        }
        maxFrameSize = bytes;
    }

    /**
     * Holds the peer to its connection preface (RFC 9113 section 3.4): its first frame must be SETTINGS (not an ACK),
     * anything else is a connection PROTOCOL_ERROR. An endpoint calls it before its first read; a reader fed a
     * fragment of a connection (a unit test's frames) does not.
     */
    public void expectSettingsFirst() {
        settingsFirst = true;
    }

    /**
     * This endpoint's SETTINGS_MAX_HEADER_LIST_SIZE (enforced from the start: the limit is advisory until
     * acknowledged, RFC 9113 section 6.5.2). A header block that decodes to a larger list is decoded to its end (the
     * HPACK table stays in step) and then is a stream error (PROTOCOL_ERROR) on its stream; the connection goes on.
     */
    public void maxHeaderListSize(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("SETTINGS_MAX_HEADER_LIST_SIZE out of range: " + bytes);
        }
        maxHeaderListSize = bytes;
    }

    /**
     * This endpoint's SETTINGS_HEADER_TABLE_SIZE, once the peer acknowledged it: the peer's encoder may use no more,
     * and when it is smaller than the table in use, the peer's next header block must begin with a dynamic table
     * size update (RFC 7541 section 4.2); one that does not is a COMPRESSION_ERROR.
     */
    public void headerTableSize(long bytes) {
        hpack.tableSizeLimit(bytes);
    }

    /**
     * Reads one frame and hands it over (a HEADERS without END_HEADERS is handed over with its last CONTINUATION).
     *
     * @return false at the end of the stream between frames
     * @throws EOFException the stream ended inside a frame
     */
    public boolean nextFrame() throws IOException, Http2Error {
        int first = in.read();
        if (first < 0) {
            if (block != null) {
                throw new EOFException("the stream ended inside a header block");
            }
            return false;
        }
        header[0] = (byte) first;
        in.readFully(header, 1, 8);
        int length = ((header[0] & 0xFF) << 16) | ((header[1] & 0xFF) << 8) | (header[2] & 0xFF);
        int type = header[3] & 0xFF;
        int flags = header[4] & 0xFF;
        int streamId = ((header[5] & 0x7F) << 24) | ((header[6] & 0xFF) << 16) | ((header[7] & 0xFF) << 8)
                | (header[8] & 0xFF);
        if (length > maxFrameSize) {
            // Every frame is read whole first: the error leaves the reader at a frame boundary.
            in.skipNBytes(length);
            throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "frame of " + length + " bytes exceeds SETTINGS_MAX_FRAME_SIZE "
                    + maxFrameSize);
        }
        // DATA is read into one reused buffer (handed over as a view, see FrameHandler#data): no allocation per frame
        byte[] payload = type == DATA ? dataBuffer(length) : new byte[length];
        in.readFully(payload, 0, length);
        if (!settingsSeen) {
            if (settingsFirst && (type != SETTINGS || (flags & ACK) != 0)) {
                throw connectionError(ErrorCode.PROTOCOL_ERROR, "the peer's first frame is type " + type
                        + ", not SETTINGS (RFC 9113 section 3.4)");
            }
            settingsSeen = true;
        }
        if (block != null && (type != CONTINUATION || streamId != blockStream)) {
            throw connectionError(ErrorCode.PROTOCOL_ERROR, "a header block of stream " + blockStream
                    + " is open: expected CONTINUATION on it, got type " + type + " on stream " + streamId);
        }
        switch (type) {
            case DATA -> data(flags, streamId, payload, length);
            case HEADERS -> headers(flags, streamId, payload);
            case PRIORITY -> priority(streamId, payload);
            case RST_STREAM -> rstStream(streamId, payload);
            case SETTINGS -> settings(flags, streamId, payload);
            case PUSH_PROMISE -> {
                requireStream(type, streamId);
                throw connectionError(ErrorCode.PROTOCOL_ERROR, "PUSH_PROMISE: push is not enabled");
            }
            case PING -> ping(flags, streamId, payload);
            case GOAWAY -> goAway(streamId, payload);
            case WINDOW_UPDATE -> windowUpdate(streamId, payload);
            case CONTINUATION -> continuation(flags, streamId, payload);
            default -> handler.unknown(type, flags, streamId, payload); // section 5.5: ignored by default
        }
        return true;
    }

    private void data(int flags, int streamId, byte[] buffer, int length) throws Http2Error {
        requireStream(DATA, streamId);
        int[] range = unpadded(flags, buffer, length, 0);
        handler.data(streamId, (flags & END_STREAM) != 0, ByteBuffer.wrap(buffer, range[0], range[1] - range[0]),
                length);
    }

    private byte[] dataBuffer(int length) {
        if (dataBuffer.length < length) {
            dataBuffer = new byte[Math.max(length, maxFrameSize)];
        }
        return dataBuffer;
    }

    private void headers(int flags, int streamId, byte[] payload) throws Http2Error {
        requireStream(HEADERS, streamId);
        int[] range = unpadded(flags, payload, payload.length, (flags & PRIORITY_FLAG) != 0 ? 5 : 0);
        blockError = null;
        if ((flags & PRIORITY_FLAG) != 0) {
            int dependency = ByteBuffer.wrap(payload, range[0] - 5, 4).getInt() & 0x7FFF_FFFF;
            if (dependency == streamId) {
                // a stream error (section 5.3.1), but the block is still decoded first: HPACK stays in step
                blockError = new Http2Error.StreamError(streamId, ErrorCode.PROTOCOL_ERROR, "stream depends on itself");
            }
        }
        blockStream = streamId;
        blockEmptyContinuations = 0;
        blockEndStream = (flags & END_STREAM) != 0;
        block = new byte[Math.max(range[1] - range[0], 64)];
        blockLength = 0;
        append(payload, range[0], range[1] - range[0]);
        if ((flags & END_HEADERS) != 0) {
            endBlock();
        }
    }

    private void continuation(int flags, int streamId, byte[] payload) throws Http2Error {
        requireStream(CONTINUATION, streamId);
        if (block == null) {
            throw connectionError(ErrorCode.PROTOCOL_ERROR, "CONTINUATION on stream " + streamId
                    + " without a HEADERS before it");
        }
        if (payload.length == 0 && (flags & END_HEADERS) == 0
                && ++blockEmptyContinuations > MAX_EMPTY_CONTINUATIONS) {
            throw connectionError(ErrorCode.ENHANCE_YOUR_CALM, "more than " + MAX_EMPTY_CONTINUATIONS
                    + " empty CONTINUATION frames in the header block of stream " + streamId + " (RFC 9113 section 10.5)");
        }
        append(payload, 0, payload.length);
        if ((flags & END_HEADERS) != 0) {
            endBlock();
        }
    }

    private void append(byte[] bytes, int offset, int length) throws Http2Error {
        if (blockLength + length > MAX_HEADER_BLOCK_BYTES) {
            throw connectionError(ErrorCode.ENHANCE_YOUR_CALM, "header block of stream " + blockStream
                    + " exceeds " + MAX_HEADER_BLOCK_BYTES + " bytes");
        }
        if (blockLength + length > block.length) {
            block = Arrays.copyOf(block, Math.max(block.length * 2, blockLength + length));
        }
        System.arraycopy(bytes, offset, block, blockLength, length);
        blockLength += length;
    }

    private void endBlock() throws Http2Error {
        byte[] whole = Arrays.copyOf(block, blockLength);
        int streamId = blockStream;
        boolean endStream = blockEndStream;
        block = null;
        HpackDecoder.Block decoded = hpack.decode(streamId, whole, maxHeaderListSize);
        if (blockError != null) {
            Http2Error.StreamError e = blockError;
            blockError = null;
            throw e;
        }
        if (decoded.overLimit()) {
            throw new Http2Error.StreamError(streamId, ErrorCode.PROTOCOL_ERROR, "header list of "
                    + decoded.listSize() + " bytes exceeds SETTINGS_MAX_HEADER_LIST_SIZE " + maxHeaderListSize);
        }
        handler.headers(streamId, endStream, decoded.fields());
    }

    private void priority(int streamId, byte[] payload) throws Http2Error {
        requireStream(PRIORITY, streamId);
        if (payload.length != 5) {
            throw new Http2Error.StreamError(streamId, ErrorCode.FRAME_SIZE_ERROR, "PRIORITY of " + payload.length
                    + " bytes, not 5");
        }
        int word = ByteBuffer.wrap(payload).getInt();
        int dependency = word & 0x7FFF_FFFF;
        if (dependency == streamId) {
            throw new Http2Error.StreamError(streamId, ErrorCode.PROTOCOL_ERROR, "stream depends on itself");
        }
        handler.priority(streamId, dependency, (payload[4] & 0xFF) + 1, word < 0);
    }

    private void rstStream(int streamId, byte[] payload) throws Http2Error {
        requireStream(RST_STREAM, streamId);
        if (payload.length != 4) {
            throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "RST_STREAM of " + payload.length + " bytes, not 4");
        }
        handler.rstStream(streamId, ByteBuffer.wrap(payload).getInt());
    }

    private void settings(int flags, int streamId, byte[] payload) throws Http2Error {
        requireConnection(SETTINGS, streamId);
        boolean ack = (flags & ACK) != 0;
        if (ack && payload.length != 0) {
            throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "SETTINGS ACK with a payload");
        }
        if (payload.length % 6 != 0) {
            throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "SETTINGS of " + payload.length
                    + " bytes, not a multiple of 6");
        }
        Map<Integer, Long> settings = new LinkedHashMap<>();
        ByteBuffer b = ByteBuffer.wrap(payload);
        while (b.hasRemaining()) {
            int id = b.getShort() & 0xFFFF;
            long value = b.getInt() & 0xFFFF_FFFFL;
            switch (id) {
                case Http2.SETTINGS_ENABLE_PUSH -> {
                    if (value > 1) {
                        throw connectionError(ErrorCode.PROTOCOL_ERROR, "SETTINGS_ENABLE_PUSH " + value);
                    }
                }
                case Http2.SETTINGS_INITIAL_WINDOW_SIZE -> {
                    if (value > Integer.MAX_VALUE) {
                        throw connectionError(ErrorCode.FLOW_CONTROL_ERROR, "SETTINGS_INITIAL_WINDOW_SIZE " + value);
                    }
                }
                case Http2.SETTINGS_MAX_FRAME_SIZE -> {
                    if (value < DEFAULT_MAX_FRAME_SIZE || value > 0xFF_FFFF) {
                        throw connectionError(ErrorCode.PROTOCOL_ERROR, "SETTINGS_MAX_FRAME_SIZE " + value);
                    }
                }
                default -> {
                    // others (and unknown identifiers, section 6.5.2) are the handler's
                }
            }
            settings.put(id, value);
        }
        handler.settings(ack, settings);
    }

    private void ping(int flags, int streamId, byte[] payload) throws Http2Error {
        requireConnection(PING, streamId);
        if (payload.length != 8) {
            throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "PING of " + payload.length + " bytes, not 8");
        }
        handler.ping((flags & ACK) != 0, ByteBuffer.wrap(payload).getLong());
    }

    private void goAway(int streamId, byte[] payload) throws Http2Error {
        requireConnection(GOAWAY, streamId);
        if (payload.length < 8) {
            throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "GOAWAY of " + payload.length + " bytes, under 8");
        }
        ByteBuffer b = ByteBuffer.wrap(payload);
        int lastStreamId = b.getInt() & 0x7FFF_FFFF;
        int code = b.getInt();
        handler.goAway(lastStreamId, code, Arrays.copyOfRange(payload, 8, payload.length));
    }

    private void windowUpdate(int streamId, byte[] payload) throws Http2Error {
        if (payload.length != 4) {
            throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "WINDOW_UPDATE of " + payload.length + " bytes, not 4");
        }
        int increment = ByteBuffer.wrap(payload).getInt() & 0x7FFF_FFFF;
        if (increment == 0) {
            if (streamId == 0) {
                throw connectionError(ErrorCode.PROTOCOL_ERROR, "WINDOW_UPDATE of 0 on the connection");
            }
            throw new Http2Error.StreamError(streamId, ErrorCode.PROTOCOL_ERROR, "WINDOW_UPDATE of 0");
        }
        handler.windowUpdate(streamId, increment);
    }

    /**
     * @return the data's [start, end) in the payload's first {@code length} bytes, after {@code skip} leading bytes
     *         (HEADERS' priority)
     */
    private static int[] unpadded(int flags, byte[] payload, int length, int skip) throws Http2Error {
        int start = 0;
        int end = length;
        if ((flags & PADDED) != 0) {
            if (length < 1) {
                throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "PADDED frame without a pad length");
            }
            int padding = payload[0] & 0xFF;
            start = 1;
            end -= padding;
        }
        start += skip;
        if (end < start) {
            throw connectionError(ErrorCode.PROTOCOL_ERROR, "padding (and priority) longer than the frame");
        }
        return new int[] {start, end};
    }

    private static void requireStream(int type, int streamId) throws Http2Error {
        if (streamId == 0) {
            throw connectionError(ErrorCode.PROTOCOL_ERROR, "frame type " + type + " on stream 0");
        }
    }

    private static void requireConnection(int type, int streamId) throws Http2Error {
        if (streamId != 0) {
            throw connectionError(ErrorCode.PROTOCOL_ERROR, "frame type " + type + " on stream " + streamId
                    + ", not 0");
        }
    }

    private static Http2Error.ConnectionError connectionError(ErrorCode code, String message) {
        return new Http2Error.ConnectionError(code, message);
    }
}
