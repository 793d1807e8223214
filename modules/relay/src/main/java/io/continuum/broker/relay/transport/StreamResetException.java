package io.continuum.broker.relay.transport;

import io.continuum.broker.h2.ErrorCode;

/** The stream was reset: by the peer (RST_STREAM) or locally by {@link BusStream#cancel()}. */
public final class StreamResetException extends TransportException {
    /** HTTP/2 error code CANCEL (0x8), the code of a local {@link BusStream#cancel()}. */
    public static final long CANCEL = ErrorCode.CANCEL.code();

    private final long errorCode;
    private final boolean byPeer;

    /**
     * @param streamId  stream id
     * @param errorCode RST_STREAM error code
     * @param byPeer    {@code true} when the peer sent RST_STREAM, {@code false} for a local cancel
     */
    public StreamResetException(long streamId, long errorCode, boolean byPeer) {
        super("stream " + streamId + (byPeer ? " reset by peer: " : " cancelled locally: ")
                + ErrorCode.name(errorCode));
        this.errorCode = errorCode;
        this.byPeer = byPeer;
    }

    /** @return the RST_STREAM error code */
    public long errorCode() {
        return errorCode;
    }

    /** @return whether the peer reset the stream */
    public boolean byPeer() {
        return byPeer;
    }
}
