package io.continuum.broker.protocol;

import java.util.Map;

/**
 * The frame types of protocol v1 and who may send them (bus-protocol-v1.md sections 3.1, 3.2).
 */
enum FrameType {
    HELLO("hello", true, false),
    HEARTBEAT("heartbeat", true, true),
    STREAM_OPENED("stream_opened", true, false),
    STREAM_REFUSED("stream_refused", true, false),
    STREAM_CLOSED("stream_closed", true, false),
    DRAINING("draining", true, false),
    WELCOME("welcome", false, true),
    SUBSCRIBE("subscribe", false, true),
    UNSUBSCRIBE("unsubscribe", false, true),
    DRAIN("drain", false, true),
    ERROR("error", false, true);

    private static final Map<String, FrameType> BY_WIRE;

    static {
        FrameType[] all = values();
        @SuppressWarnings("unchecked")
        Map.Entry<String, FrameType>[] entries = new Map.Entry[all.length];
        for (int i = 0; i < all.length; i++) {
            entries[i] = Map.entry(all[i].wire, all[i]);
        }
        BY_WIRE = Map.ofEntries(entries);
    }

    final String wire;
    final boolean fromClient;
    final boolean fromRouter;

    FrameType(String wire, boolean fromClient, boolean fromRouter) {
        this.wire = wire;
        this.fromClient = fromClient;
        this.fromRouter = fromRouter;
    }

    /**
     * The known type of this wire name.
     *
     * @param wire type member
     * @return type, or null when this protocol version does not know it
     */
    static FrameType of(String wire) {
        return BY_WIRE.get(wire);
    }

    boolean sentBy(Direction direction) {
        return direction == Direction.FROM_ROUTER ? fromRouter : fromClient;
    }

    /** Which peer sent the bytes being decoded. */
    enum Direction {
        /** Router frames: what the broker receives. */
        FROM_ROUTER("router"),
        /** Client frames: what a router receives. */
        FROM_CLIENT("client");

        final String peer;

        Direction(String peer) {
            this.peer = peer;
        }
    }
}
