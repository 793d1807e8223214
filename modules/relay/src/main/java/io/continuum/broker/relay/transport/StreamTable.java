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
    private boolean openingRemoteEnded;
    private DataVerdict openingViolation;
    private final List<Consumer<HelidonBusStream>> openingEvents = new ArrayList<>();

    /** The connection is about to write a new stream's HEADERS; {@link #register} (or a failed open) ends it. */
    void openingStarted() {
        opening = true;
        openingHeadSeen = false;
        openingRemoteEnded = false;
        openingViolation = null;
        openingEvents.clear();
    }

    void openingFailed() {
        opening = false;
        openingEvents.clear();
    }

    /**
     * Registers the stream being opened and applies the events that arrived for it first.
     *
     * @return the first DATA the peer sent it that its stream does not allow, while it was being opened (the
     *         caller resets it: see {@link #dataVerdict}), or null
     */
    DataVerdict register(HelidonBusStream stream) {
        int id = stream.idInt();
        boolean early = isOpening(id);
        DataVerdict violation = early ? openingViolation : null;
        List<Consumer<HelidonBusStream>> events = early ? List.copyOf(openingEvents) : List.of();
        opening = false;
        openingEvents.clear();
        streams.put(id, stream);
        highestRegistered = Math.max(highestRegistered, id);
        events.forEach(e -> e.accept(stream));
        return violation;
    }

    /**
     * What becomes of a DATA frame on stream {@code id} that starts now. For the stream being opened, a violation
     * is recorded for {@link #register}, which resets the stream.
     */
    DataVerdict dataVerdict(int id) {
        HelidonBusStream stream = streams.get(id);
        if (stream != null) {
            return stream.dataVerdictLocked();
        }
        if (!isOpening(id)) {
            return DataVerdict.IGNORE;
        }
        DataVerdict verdict = openingViolation != null ? DataVerdict.IGNORE
                : !openingHeadSeen ? DataVerdict.BEFORE_HEADERS
                : openingRemoteEnded ? DataVerdict.AFTER_END_STREAM
                : DataVerdict.PASS;
        if (verdict.resetsStream()) {
            openingViolation = verdict;
        }
        return verdict;
    }

    /** A complete header block arrived for {@code id}. */
    void headersArrived(int id, boolean endStream, Consumer<HelidonBusStream> event) {
        if (isOpening(id)) {
            openingHeadSeen = true;
            openingRemoteEnded |= endStream;
        }
        onStream(id, event);
    }

    /** A DATA frame that passed has ended, for {@code id}. */
    void dataArrived(int id, boolean endStream, Consumer<HelidonBusStream> event) {
        if (isOpening(id)) {
            openingRemoteEnded |= endStream;
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
