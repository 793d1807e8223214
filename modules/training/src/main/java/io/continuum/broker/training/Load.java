package io.continuum.broker.training;

/**
 * What one training stream carries: the shapes {@code bench/run.sh isolate} measures, so that the method profiles
 * the cache records are those of the data path under the loads that matter (docs/benchmarks.md). Public but not
 * exported: the bench reads results by load on the class path.
 */
public enum Load {
    /** The publisher sends 200-byte messages, paced at {@link #MESSAGES_PER_SECOND} (KV events, load metrics). */
    MESSAGES(200),
    /** The publisher sends 4 KiB writes, paced at {@link #CHUNKS_PER_SECOND} (throughput). */
    CHUNKS(4_096),
    /** The router sends 200 bytes, the publisher echoes them, the router sends the next (one message in flight). */
    ECHO(200);

    /**
     * Per {@link #MESSAGES} stream: C2 compiles the path within a second, and a cold broker keeps up (a rate that
     * overflows a stream's 1 MiB budget while the broker is still interpreted ends the stream: R-BUF).
     */
    static final int MESSAGES_PER_SECOND = 10_000;
    /** Per {@link #CHUNKS} stream: 4 MiB/s. */
    static final int CHUNKS_PER_SECOND = 1_000;
    /** A connection's rate climbs from a tenth to all of it over this long, while the broker's JIT warms up. */
    static final java.time.Duration RAMP = java.time.Duration.ofSeconds(3);

    private final int bytes;

    Load(int bytes) {
        this.bytes = bytes;
    }

    /** @return the size of one message (one write) */
    int bytes() {
        return bytes;
    }
}
