package io.continuum.broker.relay.transport;

import java.time.Duration;

/**
 * At most {@code max} frames of one kind per window of {@code window}; the count starts again with each window. The
 * shape of Netty's {@code decoderEnforceMaxRstFramesPerWindow} (200 RST_STREAM per 30 s by default). Frames that
 * change nothing for this side (PRIORITY, which it ignores; RST_STREAM, which ends a stream the router could have
 * ended once) are cheap one by one and not by the million: past the limit the connection ends with
 * ENHANCE_YOUR_CALM (RFC 9113 section 10.5). Used by the reader thread only.
 */
final class FrameRateLimit {
    private final int max;
    private final long windowNanos;
    private long windowStart;
    private int count;

    FrameRateLimit(int max, Duration window) {
        this.max = max;
        this.windowNanos = window.toNanos();
        this.windowStart = System.nanoTime();
    }

    /** @return whether one more frame at {@code nowNanos} is within the limit */
    boolean allow(long nowNanos) {
        if (nowNanos - windowStart >= windowNanos) {
            windowStart = nowNanos;
            count = 0;
        }
        return ++count <= max;
    }

    int max() {
        return max;
    }
}
