package io.continuum.broker.app.observe;

import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

import io.continuum.broker.event.JsonWriter;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.SessionLimits;
import io.continuum.broker.relay.api.RelayStatus;
import io.continuum.broker.relay.api.SessionState;

/**
 * What {@code /statusz} shows: what only the app knows (client id, router bus, the metadata view's counts, the
 * start-up and idle states) beside the relay's own {@link RelayStatus}, rendered as it is rather than copied. Contains
 * no credential.
 *
 * @param state      session state: the relay's while it runs, else {@code syncing} (start-up) or {@code idle}
 * @param stateSince when this snapshot was taken, or when the app entered a state the relay does not report
 * @param clientId   configured client id
 * @param bus        router bus as {@code https://host:port}
 * @param metadata   the metadata view's counts
 * @param relay      the relay's status, while a relay runs
 */
public record BrokerStatus(SessionState state,
                           Instant stateSince,
                           String clientId,
                           String bus,
                           Metadata metadata,
                           Optional<RelayStatus> relay) {
    /**
     * Checks that a running relay's state is the one shown.
     */
    public BrokerStatus {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(metadata, "metadata");
        if (relay.isPresent() && relay.get().state() != state) {
            throw new IllegalArgumentException("state " + state + " is not the relay's " + relay.get().state());
        }
    }

    /**
     * The status while a relay runs: its state is the relay's.
     *
     * @param relay    the relay's status
     * @param at       when the snapshot was taken
     * @param clientId configured client id
     * @param bus      router bus
     * @param metadata the metadata view's counts
     * @return the status
     */
    public static BrokerStatus relaying(RelayStatus relay, Instant at, String clientId, String bus,
                                        Metadata metadata) {
        return new BrokerStatus(relay.state(), at, clientId, bus, metadata, Optional.of(relay));
    }

    /**
     * The status while no relay runs (start-up, or the idle runtime).
     *
     * @param state    {@code syncing} or {@code idle}
     * @param since    when that state was entered
     * @param clientId configured client id
     * @param bus      router bus
     * @return the status
     */
    public static BrokerStatus withoutRelay(SessionState state, Instant since, String clientId, String bus) {
        return new BrokerStatus(state, since, clientId, bus, Metadata.NOT_STARTED, Optional.empty());
    }

    /**
     * The metadata view's counts.
     *
     * @param synced     whether the view completed its initial sync
     * @param resources  resources held
     * @param publishers unique publishers held
     */
    public record Metadata(boolean synced, long resources, long publishers) {
        /** Before the view runs. */
        public static final Metadata NOT_STARTED = new Metadata(false, 0, 0);
    }

    /**
     * Renders the status as one JSON object: version, state, client, bus, limits, open stream count and metadata
     * always; the relay's details (session id, next attempt, streams, recent ends, refusals by code) while it runs.
     *
     * @param version broker version
     * @return JSON text
     */
    public String toJson(String version) {
        JsonWriter json = new JsonWriter().beginObject()
                .field("version", version)
                .field("state", state.label())
                .field("state_since", stateSince.toString())
                .field("client_id", clientId)
                .field("bus", bus);
        SessionLimits limits = relay.map(RelayStatus::limits).orElse(null);
        if (limits == null) {
            json.field("limits", null);
        } else {
            json.beginObject("limits")
                    .field("heartbeat_interval_ms", limits.heartbeatInterval().toMillis())
                    .field("idle_timeout_ms", limits.idleTimeout().toMillis())
                    .field("max_streams", limits.maxStreams())
                    .field("max_stream_buffer_bytes", limits.maxStreamBufferBytes())
                    .field("max_frame_bytes", limits.maxFrameBytes())
                    .endObject();
        }
        json.field("open_streams", relay.map(r -> r.openStreams().size()).orElse(0))
                .beginObject("metadata")
                .field("synced", metadata.synced())
                .field("resources", metadata.resources())
                .field("publishers", metadata.publishers())
                .endObject();
        relay.ifPresent(r -> details(json, r));
        return json.endObject().finish();
    }

    private static void details(JsonWriter json, RelayStatus relay) {
        json.field("session_id", relay.sessionId())
                .field("next_attempt_at", relay.nextAttemptAt())
                .field("buffered_bytes", relay.bufferedBytes())
                .beginArray("streams");
        for (RelayStatus.OpenStream st : relay.openStreams()) {
            json.beginObject()
                    .field("id", st.streamId())
                    .field("target", st.target())
                    .field("age_ms", st.age().toMillis())
                    .field("bytes_to_router", st.bytesToRouter())
                    .field("bytes_to_publisher", st.bytesToPublisher())
                    .field("buffered_bytes", st.bufferedBytes())
                    .endObject();
        }
        json.endArray().beginArray("recent_session_ends");
        for (RelayStatus.SessionEnd e : relay.recentEnds()) {
            json.beginObject()
                    .field("at", e.at())
                    .field("result", e.result().label())
                    .field("reason", e.reason().wire())
                    .endObject();
        }
        // Counted by code: the recent refusals' stream ids and reasons are per-target detail an operator reads in
        // the log, not on a page anyone with the metrics port can fetch.
        Map<Code, Long> byCode = new EnumMap<>(Code.class);
        relay.recentRefusals().forEach(r -> byCode.merge(r.code(), 1L, Long::sum));
        Map<String, Long> byWire = new TreeMap<>();
        byCode.forEach((code, n) -> byWire.put(code.wire(), n));
        json.endArray().beginObject("recent_refusals");
        byWire.forEach(json::field);
        json.endObject();
    }
}
