package io.continuum.broker.bench;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The SUB end of one ZMTP 3.0 connection (RFC 23, NULL mechanism), fed the publisher's bytes as they arrive and
 * handing each message to a {@link DynamoCheck}: what lets the lean router be the Dynamo-shaped load's subscriber
 * itself, with no socket behind it (bench/isolate.py, {@code ISOLATE_DYNAMO_SINK=router}). The same bytes as
 * bench/zmtp-peers.c's SUB side: {@link #HELLO} first, the subscription to everything after the publisher's READY.
 * Not thread-safe: one reader feeds it.
 */
final class ZmtpSubscriber {
    private static final int GREETING = 64;
    private static final int MAX_FRAME = 2_000 + 64;
    /** Our greeting (version 3.0, NULL, as-server 0) and READY with Socket-Type SUB. */
    static final byte[] HELLO = hello();
    /** ZMTP 3.0's subscription: a message of 0x01 and the prefix, here empty (everything). */
    static final byte[] SUBSCRIBE_ALL = {0x00, 0x01, 0x01};

    private final int publisher;
    private final DynamoCheck check;
    private final byte[] greeting = new byte[GREETING];
    private int greetingHave;
    private byte[] pending = new byte[4_096]; // a frame split between DATA frames, and what follows it
    private int have;
    private boolean ready; // the publisher's READY arrived
    private boolean broken;

    ZmtpSubscriber(int publisher, DynamoCheck check) {
        this.publisher = publisher;
        this.check = check;
    }

    /** The outcome of {@link #feed}. */
    enum Fed {
        /** Nothing to send. */
        OK,
        /** The publisher's READY arrived: send {@link #SUBSCRIBE_ALL} now. */
        SUBSCRIBE,
        /** Not ZMTP: the stream is of no further use (counted once as bad). */
        BROKEN
    }

    /** Feeds the next bytes from the publisher. */
    Fed feed(byte[] b, int off, int len) {
        if (broken) {
            return Fed.BROKEN;
        }
        if (greetingHave < GREETING) {
            int n = Math.min(len, GREETING - greetingHave);
            System.arraycopy(b, off, greeting, greetingHave, n);
            greetingHave += n;
            off += n;
            len -= n;
            if (greetingHave == GREETING && ((greeting[0] & 0xFF) != 0xFF || greeting[9] != 0x7F || greeting[10] < 3)) {
                return broke();
            }
        }
        if (len == 0) {
            return Fed.OK;
        }
        boolean wasReady = ready;
        if (have == 0) { // the common case: whole frames in place, only a split tail copied
            int used = frames(b, off, len);
            if (used < 0) {
                return broke();
            }
            keep(b, off + used, len - used);
        } else {
            keep(b, off, len);
            int used = frames(pending, 0, have);
            if (used < 0) {
                return broke();
            }
            System.arraycopy(pending, used, pending, 0, have - used);
            have -= used;
        }
        return ready && !wasReady ? Fed.SUBSCRIBE : Fed.OK;
    }

    /** Consumes the complete frames in b[off, off + len); returns the bytes consumed, or -1 if not ZMTP. */
    private int frames(byte[] b, int off, int len) {
        int at = 0;
        while (len - at >= 2) {
            int flags = b[off + at] & 0xFF;
            int h;
            long size;
            if ((flags & 0x02) != 0) {
                if (len - at < 9) {
                    break;
                }
                size = 0;
                for (int k = 0; k < 8; k++) {
                    size = (size << 8) | (b[off + at + 1 + k] & 0xFF);
                }
                h = 9;
            } else {
                size = b[off + at + 1] & 0xFF;
                h = 2;
            }
            if (size > MAX_FRAME || (flags & ~0x07) != 0) {
                return -1;
            }
            if (len - at < h + size) {
                break;
            }
            if ((flags & 0x04) == 0) {
                check.deliver(publisher, b, off + at + h, (int) size);
            } else { // a command: the publisher's READY, after which the subscription may go
                ready = true;
            }
            at += h + (int) size;
        }
        return at;
    }

    private void keep(byte[] b, int off, int len) {
        if (have + len > pending.length) {
            pending = Arrays.copyOf(pending, Math.max(pending.length * 2, have + len));
        }
        System.arraycopy(b, off, pending, have, len);
        have += len;
    }

    private Fed broke() {
        broken = true;
        check.broken();
        return Fed.BROKEN;
    }

    private static byte[] hello() {
        byte[] type = "SUB".getBytes(StandardCharsets.US_ASCII);
        byte[] h = new byte[GREETING + 2 + 1 + 5 + 1 + 11 + 4 + type.length];
        h[0] = (byte) 0xFF;
        h[9] = 0x7F;
        h[10] = 3;
        System.arraycopy("NULL".getBytes(StandardCharsets.US_ASCII), 0, h, 12, 4);
        int c = GREETING;
        h[c++] = 0x04; // command, short
        h[c++] = (byte) (h.length - GREETING - 2);
        h[c++] = 5;
        for (byte x : "READY".getBytes(StandardCharsets.US_ASCII)) {
            h[c++] = x;
        }
        h[c++] = 11;
        for (byte x : "Socket-Type".getBytes(StandardCharsets.US_ASCII)) {
            h[c++] = x;
        }
        c += 3;
        h[c++] = (byte) type.length;
        System.arraycopy(type, 0, h, c, type.length);
        return h;
    }
}
