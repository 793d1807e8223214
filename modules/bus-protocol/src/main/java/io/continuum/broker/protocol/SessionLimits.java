package io.continuum.broker.protocol;

import java.time.Duration;

/**
 * The limits a session runs under, negotiated from {@code welcome} (bus-protocol-v1.md section
 * 3.2): defaults for what the router left out, then clamping.
 *
 * @param heartbeatInterval     heartbeat interval, in [100 ms, 60 s]
 * @param idleTimeout           idle timeout, at least 3 x heartbeat
 * @param maxStreams            open + opening streams, in [1, 65,536]
 * @param maxStreamBufferBytes  per-stream budget toward the router, in [16,384, 1,048,576]
 * @param maxFrameBytes         frame size limit, in [4,096, 1,048,576]
 */
public record SessionLimits(Duration heartbeatInterval, Duration idleTimeout, int maxStreams,
                            int maxStreamBufferBytes, int maxFrameBytes) {
    /** Frame size limit before {@code welcome} and when {@code welcome} names none. */
    public static final int DEFAULT_MAX_FRAME_BYTES = 65_536;

    /**
     * Negotiates limits from a {@code welcome}: defaults, then clamping, exactly as section 3.2 says.
     *
     * @param welcome the router's welcome
     * @return effective limits
     */
    public static SessionLimits negotiate(Frame.Welcome welcome) {
        throw new UnsupportedOperationException("negotiation lands with the codec");
    }
}
