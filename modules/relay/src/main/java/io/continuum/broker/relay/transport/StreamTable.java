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
 * waits here and is applied at registration.
 */
final class StreamTable {
    private static final int MAX_PENDING_EVENTS = 64;

    private final Map<Integer, HelidonBusStream> streams = new HashMap<>();
    private final Map<Integer, List<Consumer<HelidonBusStream>>> pendingEvents = new HashMap<>();
    private int highestRegistered;

    /** Registers a stream and applies the events that arrived for it first. */
    void register(HelidonBusStream stream) {
        int id = stream.idInt();
        streams.put(id, stream);
        highestRegistered = Math.max(highestRegistered, id);
        List<Consumer<HelidonBusStream>> early = pendingEvents.remove(id);
        pendingEvents.keySet().removeIf(k -> k <= highestRegistered);
        if (early != null) {
            early.forEach(e -> e.accept(stream));
        }
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
        return open;
    }
}
