package io.continuum.broker.protocol;

/**
 * Constants of bus protocol v1 that both the codec and the transport use.
 */
public final class BusProtocol {
    /** The only protocol version this broker speaks. */
    public static final int VERSION = 1;
    /** Content type of the session stream (both directions). */
    public static final String SESSION_CONTENT_TYPE = "application/x-continuum-bus";
    /** Content type of a data stream request. */
    public static final String STREAM_CONTENT_TYPE = "application/octet-stream";
    /** Path of the session stream. */
    public static final String SESSION_PATH = "/bus/v1/session";
    /** Prefix of a data stream path; the stream id follows. */
    public static final String STREAM_PATH_PREFIX = "/bus/v1/streams/";
    /** Header naming the session on data streams. */
    public static final String SESSION_ID_HEADER = "continuum-session-id";

    private BusProtocol() {
    }

    /**
     * Path of the data stream for {@code streamId}.
     *
     * @param streamId stream id, 1 .. 2^53-1
     * @return request path
     */
    public static String streamPath(long streamId) {
        return STREAM_PATH_PREFIX + streamId;
    }
}
