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
    /** Heartbeat interval when {@code welcome} names none, in milliseconds. */
    public static final long DEFAULT_HEARTBEAT_INTERVAL_MS = 10_000;
    /** Idle timeout when {@code welcome} names none, in milliseconds. */
    public static final long DEFAULT_IDLE_TIMEOUT_MS = 30_000;
    /** Open + opening stream limit when {@code welcome} names none. */
    public static final int DEFAULT_MAX_STREAMS = 1_024;
    /** Per-stream buffer budget when {@code welcome} names none. */
    public static final int DEFAULT_MAX_STREAM_BUFFER_BYTES = 1_048_576;

    /** Shortest heartbeat interval accepted, in milliseconds. */
    public static final long HEARTBEAT_INTERVAL_FLOOR_MS = 100;
    /** Longest heartbeat interval accepted, in milliseconds. */
    public static final long HEARTBEAT_INTERVAL_CEILING_MS = 60_000;
    /** The idle timeout is at least this many heartbeat intervals. */
    public static final int IDLE_TIMEOUT_MIN_HEARTBEATS = 3;
    /** Smallest stream limit accepted. */
    public static final int MAX_STREAMS_FLOOR = 1;
    /** Largest stream limit accepted. */
    public static final int MAX_STREAMS_CEILING = 65_536;
    /** Smallest per-stream buffer budget accepted. */
    public static final int MAX_STREAM_BUFFER_BYTES_FLOOR = 16_384;
    /** Largest per-stream buffer budget accepted. */
    public static final int MAX_STREAM_BUFFER_BYTES_CEILING = 1_048_576;
    /** Smallest frame size limit accepted. */
    public static final int MAX_FRAME_BYTES_FLOOR = 4_096;
    /** Largest frame size limit accepted; no frame of this protocol is ever larger. */
    public static final int MAX_FRAME_BYTES_CEILING = 1_048_576;

    /**
     * The limits of a {@code welcome} that names none: heartbeat 10 s, idle timeout 30 s, 1,024
     * streams, 1 MiB per-stream buffer, 64 KiB frames.
     */
    public static final SessionLimits DEFAULTS = new SessionLimits(
            Duration.ofMillis(DEFAULT_HEARTBEAT_INTERVAL_MS), Duration.ofMillis(DEFAULT_IDLE_TIMEOUT_MS),
            DEFAULT_MAX_STREAMS, DEFAULT_MAX_STREAM_BUFFER_BYTES, DEFAULT_MAX_FRAME_BYTES);

    /**
     * Negotiates limits from a {@code welcome}: defaults, then clamping, exactly as section 3.2 says.
     * <ol>
     *     <li>heartbeat: default 10,000 ms, clamped to [100 ms, 60 s];</li>
     *     <li>idle timeout: default 30,000 ms, raised to at least 3 x the clamped heartbeat
     *     (there is no upper clamp);</li>
     *     <li>max_streams: default 1,024, clamped to [1, 65,536];</li>
     *     <li>max_stream_buffer_bytes: default 1,048,576, clamped to [16,384, 1,048,576];</li>
     *     <li>max_frame_bytes: default 65,536, clamped to [4,096, 1,048,576].</li>
     * </ol>
     * Zero and negative values are clamped like any other (they are not "absent").
     *
     * @param welcome the router's welcome
     * @return effective limits
     */
    public static SessionLimits negotiate(Frame.Welcome welcome) {
        long heartbeat = clamp(welcome.heartbeatIntervalMs().orElse(DEFAULT_HEARTBEAT_INTERVAL_MS),
                HEARTBEAT_INTERVAL_FLOOR_MS, HEARTBEAT_INTERVAL_CEILING_MS);
        long idle = Math.max(welcome.idleTimeoutMs().orElse(DEFAULT_IDLE_TIMEOUT_MS),
                IDLE_TIMEOUT_MIN_HEARTBEATS * heartbeat);
        int streams = (int) clamp(welcome.maxStreams().orElse(DEFAULT_MAX_STREAMS),
                MAX_STREAMS_FLOOR, MAX_STREAMS_CEILING);
        int buffer = (int) clamp(welcome.maxStreamBufferBytes().orElse(DEFAULT_MAX_STREAM_BUFFER_BYTES),
                MAX_STREAM_BUFFER_BYTES_FLOOR, MAX_STREAM_BUFFER_BYTES_CEILING);
        int frame = (int) clamp(welcome.maxFrameBytes().orElse(DEFAULT_MAX_FRAME_BYTES),
                MAX_FRAME_BYTES_FLOOR, MAX_FRAME_BYTES_CEILING);
        return new SessionLimits(Duration.ofMillis(heartbeat), Duration.ofMillis(idle), streams, buffer, frame);
    }

    private static long clamp(long value, long min, long max) {
        return Math.min(Math.max(value, min), max);
    }
}
