package io.continuum.broker.relay.transport;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A connection's live streams by id, guarded by the connection's lock. A frame for a stream whose HEADERS are being
 * written right now (its id is above every registered one) can arrive before the stream is registered: its event
 * waits here and is applied at registration. Streams are opened one at a time, so that stream is at most one, and
 * its id is the next after the highest registered.
 */
final class StreamTable {
    private static final int MAX_PENDING_EVENTS = 64;

    private final Map<Integer, HelidonBusStream> streams = new HashMap<>();
    private final Map<Integer, List<Consumer<HelidonBusStream>>> pendingEvents = new HashMap<>();
    private int highestRegistered;
    // the stream being opened (HEADERS being written, not registered yet): what its peer sent so far
    private boolean opening;
    private boolean openingHeadSeen;
    private boolean openingMalformed;

    /** The connection is about to write a new stream's HEADERS; {@link #register} (or a failed open) ends it. */
    void openingStarted() {
        opening = true;
        openingHeadSeen = false;
        openingMalformed = false;
    }

    void openingFailed() {
        opening = false;
    }

    /**
     * Registers a stream and applies the events that arrived for it first.
     *
     * @return whether the peer sent it DATA before its response HEADERS while it was being opened: the caller
     *         resets it (see {@link #awaitsResponseHead})
     */
    boolean register(HelidonBusStream stream) {
        int id = stream.idInt();
        boolean malformed = opening && openingMalformed && id == nextId();
        opening = false;
        streams.put(id, stream);
        highestRegistered = Math.max(highestRegistered, id);
        List<Consumer<HelidonBusStream>> early = pendingEvents.remove(id);
        pendingEvents.keySet().removeIf(k -> k <= highestRegistered);
        if (early != null) {
            early.forEach(e -> e.accept(stream));
        }
        return malformed;
    }

    /**
     * Whether a DATA frame on stream {@code id} now would come before the stream's response HEADERS: a malformed
     * response (RFC 9113 section 8.1). For the stream being opened, the answer is recorded for {@link #register}.
     * Any other id (a stream gone, or one never opened) is Helidon's to ignore or refuse.
     */
    boolean dataBeforeResponseHead(int id) {
        HelidonBusStream stream = streams.get(id);
        if (stream != null) {
            return stream.awaitsResponseHeadLocked();
        }
        if (opening && id == nextId() && !openingHeadSeen) {
            openingMalformed = true;
            return true;
        }
        return false;
    }

    /** A complete header block arrived for {@code id}. */
    void headersArrived(int id, Consumer<HelidonBusStream> event) {
        if (opening && id == nextId()) {
            openingHeadSeen = true;
        }
        onStream(id, event);
    }

    /** Stream ids are odd and handed out in order (Helidon's {@code LockingStreamIdSequence}): 1, 3, 5... */
    private int nextId() {
        return highestRegistered == 0 ? 1 : highestRegistered + 2;
    }

    HelidonBusStream get(int id) {
        return streams.get(id);
    }

    void remove(HelidonBusStream stream) {
        streams.remove(stream.idInt());
    }

    /** @return whether the id belongs to a stream not registered yet (rather than to one already gone) */
    boolean notYetRegistered(int id) {
        return id > highestRegistered;
    }

    /** Applies {@code event} now, or at registration if the stream's HEADERS are being written right now. */
    void onStream(int id, Consumer<HelidonBusStream> event) {
        HelidonBusStream stream = streams.get(id);
        if (stream != null) {
            event.accept(stream);
        } else if (id > highestRegistered && (id & 1) == 1) {
            List<Consumer<HelidonBusStream>> list = pendingEvents.computeIfAbsent(id, k -> new ArrayList<>());
            if (list.size() < MAX_PENDING_EVENTS) {
                list.add(event);
            }
        }
    }

    Collection<HelidonBusStream> all() {
        return streams.values();
    }

    /** @return every live stream, the table emptied */
    List<HelidonBusStream> clear() {
        List<HelidonBusStream> open = new ArrayList<>(streams.values());
        streams.clear();
        pendingEvents.clear();
        opening = false;
        return open;
    }
}
