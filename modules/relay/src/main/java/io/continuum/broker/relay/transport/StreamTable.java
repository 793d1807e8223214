package io.continuum.broker.relay.transport;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A connection's live streams by id, guarded by the connection's lock. Streams are opened one at a time, and a frame
 * for the stream whose HEADERS are being written right now can arrive before that stream is registered: its event
 * waits here and is applied at registration. That stream's id is the next after the highest registered, so no
 * frame for any other unknown id is ever kept (a router naming ids nobody opened cannot make this table grow).
 */
final class StreamTable {
    private static final int MAX_PENDING_EVENTS = 64;

    private final Map<Integer, HelidonBusStream> streams = new HashMap<>();
    private int highestRegistered;
    // the stream being opened (HEADERS being written, not registered yet): what its peer sent so far
    private boolean opening;
    private boolean openingHeadSeen;
    private boolean openingMalformed;
    private final List<Consumer<HelidonBusStream>> openingEvents = new ArrayList<>();

    /** The connection is about to write a new stream's HEADERS; {@link #register} (or a failed open) ends it. */
    void openingStarted() {
        opening = true;
        openingHeadSeen = false;
        openingMalformed = false;
        openingEvents.clear();
    }

    void openingFailed() {
        opening = false;
        openingEvents.clear();
    }

    /**
     * Registers the stream being opened and applies the events that arrived for it first.
     *
     * @return whether the peer sent it DATA before its response HEADERS while it was being opened: the caller
     *         resets it (see {@link #dataVerdict})
     */
    boolean register(HelidonBusStream stream) {
        int id = stream.idInt();
        boolean early = isOpening(id);
        boolean malformed = early && openingMalformed;
        List<Consumer<HelidonBusStream>> events = early ? List.copyOf(openingEvents) : List.of();
        opening = false;
        openingEvents.clear();
        streams.put(id, stream);
        highestRegistered = Math.max(highestRegistered, id);
        events.forEach(e -> e.accept(stream));
        return malformed;
    }

    /** What becomes of an inbound DATA frame, decided before Helidon sees a byte of it. */
    enum DataVerdict {
        /** The body of a live stream: Helidon reads it. */
        PASS,
        /**
         * For a stream this side is done with (finished or reset) or never opened: ignored (RFC 9113 section 5.1
         * lets an endpoint ignore frames on a closed stream) and credited to the connection. Helidon would ignore
         * most of these too, but not DATA after END_STREAM on a stream its reader has not finished with, which it
         * takes for a connection error.
         */
        IGNORE,
        /**
         * Before the stream's response HEADERS: a malformed response (section 8.1), which resets the stream. For
         * the stream being opened, the verdict is recorded for {@link #register}.
         */
        MALFORMED
    }

    DataVerdict dataVerdict(int id) {
        HelidonBusStream stream = streams.get(id);
        if (stream != null) {
            return stream.awaitsResponseHeadLocked() ? DataVerdict.MALFORMED : DataVerdict.PASS;
        }
        if (isOpening(id)) {
            if (openingHeadSeen) {
                return DataVerdict.PASS;
            }
            openingMalformed = true;
            return DataVerdict.MALFORMED;
        }
        return DataVerdict.IGNORE;
    }

    /** A complete header block arrived for {@code id}. */
    void headersArrived(int id, Consumer<HelidonBusStream> event) {
        if (isOpening(id)) {
            openingHeadSeen = true;
        }
        onStream(id, event);
    }

    /** @return whether {@code id} is the stream whose HEADERS are being written right now (not registered yet) */
    boolean isOpening(int id) {
        // stream ids are odd and handed out in order (Helidon's LockingStreamIdSequence): 1, 3, 5...
        return opening && id == (highestRegistered == 0 ? 1 : highestRegistered + 2);
    }

    HelidonBusStream get(int id) {
        return streams.get(id);
    }

    void remove(HelidonBusStream stream) {
        streams.remove(stream.idInt());
    }

    /**
     * Applies {@code event} now, or at registration if {@code id} is the stream being opened; an event for any
     * other stream not in the table (one gone, or one never opened) is dropped.
     */
    void onStream(int id, Consumer<HelidonBusStream> event) {
        HelidonBusStream stream = streams.get(id);
        if (stream != null) {
            event.accept(stream);
        } else if (isOpening(id) && openingEvents.size() < MAX_PENDING_EVENTS) {
            openingEvents.add(event);
        }
    }

    Collection<HelidonBusStream> all() {
        return streams.values();
    }

    /** @return every live stream, the table emptied */
    List<HelidonBusStream> clear() {
        List<HelidonBusStream> open = new ArrayList<>(streams.values());
        streams.clear();
        opening = false;
        openingEvents.clear();
        return open;
    }
}
