package io.continuum.broker.bench;

import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The subscriber side's check of the Dynamo-shaped load, the same as bench/dynamo-load.h's {@code deliver}: each
 * publisher's generator replayed in step with its sizes, so every message's publisher, sequence number, length and
 * body byte is checked. One instance per run; {@link #deliver} is called by one thread per publisher at a time
 * (the JeroMQ peers' receiver, or the lean router's connection reader), the counts are read by any thread.
 */
final class DynamoCheck {
    static final int HEADER = 12; // publisher index (4) + sequence number (8), big-endian
    private static final int MAX_SIZE = 2_000;
    /** Every body's fill byte repeated: one vectorized {@link Arrays#mismatch} per message checks the body. */
    private static final byte[][] FILLS = new byte[256][];

    static {
        for (int v = 0; v < 256; v++) {
            FILLS[v] = new byte[MAX_SIZE];
            Arrays.fill(FILLS[v], (byte) v);
        }
    }

    private final int publishers;
    private final Random[] generators;
    private final long[] expected;
    private final boolean[] joined;
    private final boolean[] ended;
    private final AtomicLong ok = new AtomicLong();
    private final AtomicLong bad = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicInteger joinedCount = new AtomicInteger();
    private final AtomicInteger endedCount = new AtomicInteger();

    DynamoCheck(long seed, int publishers) {
        this.publishers = publishers;
        generators = new Random[publishers];
        expected = new long[publishers];
        joined = new boolean[publishers];
        ended = new boolean[publishers];
        for (int i = 0; i < publishers; i++) {
            generators[i] = DynamoPeers.generator(seed, i);
            generators[i].nextDouble(); // the rate, drawn first on the publisher side
        }
    }

    /**
     * One message received on publisher {@code p}'s stream: a control message ({@code W} or {@code END}, with or
     * without the publisher's index after it: joined, finished) or a data message.
     */
    void deliver(int p, byte[] m, int off, int len) {
        if (len < HEADER) {
            control(p, m, off, len);
            return;
        }
        int from = index(m, off);
        long seq = 0;
        for (int k = 0; k < 8; k++) {
            seq = (seq << 8) | (m[off + 4 + k] & 0xFF);
        }
        Random g = generators[p];
        for (long skip = seq - expected[p]; skip > 0; skip--) {
            DynamoPeers.nextSize(g); // after a gap, keep the size generator in step
        }
        int size = DynamoPeers.nextSize(g);
        byte[] fill = FILLS[(p * 31 + (int) seq) & 0xFF];
        boolean good = from == p && seq == expected[p] && len == size
                && Arrays.mismatch(m, off + HEADER, off + len, fill, 0, len - HEADER) < 0;
        (good ? ok : bad).incrementAndGet();
        bytes.addAndGet(len);
        expected[p] = seq + 1;
    }

    private void control(int p, byte[] m, int off, int len) {
        boolean join = len >= 1 && m[off] == 'W' && (len == 1 || len == 5 && index(m, off + 1) == p);
        boolean end = len >= 3 && m[off] == 'E' && m[off + 1] == 'N' && m[off + 2] == 'D'
                && (len == 3 || len == 7 && index(m, off + 3) == p);
        if (join && !joined[p]) {
            joined[p] = true;
            joinedCount.incrementAndGet();
        } else if (end && !ended[p]) {
            ended[p] = true;
            endedCount.incrementAndGet();
        } else if (!join && !end) {
            bad.incrementAndGet();
        }
    }

    private static int index(byte[] m, int at) {
        return ((m[at] & 0xFF) << 24) | ((m[at + 1] & 0xFF) << 16) | ((m[at + 2] & 0xFF) << 8) | (m[at + 3] & 0xFF);
    }

    /** A stream that broke (a framing error): counted as one bad message; what it lost counts as lost. */
    void broken() {
        bad.incrementAndGet();
    }

    int publishers() {
        return publishers;
    }

    long ok() {
        return ok.get();
    }

    long bad() {
        return bad.get();
    }

    long bytes() {
        return bytes.get();
    }

    int joined() {
        return joinedCount.get();
    }

    int ended() {
        return endedCount.get();
    }
}
