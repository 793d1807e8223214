package io.continuum.broker.h2;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

/**
 * Receives whole frames from a {@link Http2Reader}, one method per frame type (RFC 9113 section 6), with padding
 * removed, header blocks reassembled across CONTINUATION frames and HPACK-decoded. Methods run on the reading
 * thread, in wire order. Defaults ignore the frame, so a handler implements what it cares about.
 */
public interface FrameHandler {
    /**
     * DATA; {@code flowControlled} is the frame's whole length, padding included (what counts against windows).
     * {@code data} is a view of the reader's buffer, valid until this method returns (the next frame is read into
     * the same buffer): a handler copies what it keeps, or writes it onward before returning.
     */
    default void data(int streamId, boolean endStream, ByteBuffer data, int flowControlled) throws Http2Error {
    }

    /** HEADERS and its CONTINUATIONs, decoded in order (pseudo-header fields first, as sent). */
    default void headers(int streamId, boolean endStream, List<HeaderField> fields) throws Http2Error {
    }

    /** PRIORITY (deprecated by RFC 9113, still read and checked). */
    default void priority(int streamId, int dependency, int weight, boolean exclusive) throws Http2Error {
    }

    default void rstStream(int streamId, int errorCode) throws Http2Error {
    }

    /** SETTINGS, identifier to value, in the frame's order (an ACK has none). */
    default void settings(boolean ack, Map<Integer, Long> settings) throws Http2Error {
    }

    default void ping(boolean ack, long payload) throws Http2Error {
    }

    default void goAway(int lastStreamId, int errorCode, byte[] debugData) throws Http2Error {
    }

    default void windowUpdate(int streamId, int increment) throws Http2Error {
    }

    /** A frame of a type this codec does not know (RFC 9113 section 5.5: ignored unless the handler cares). */
    default void unknown(int type, int flags, int streamId, byte[] payload) throws Http2Error {
    }
}
