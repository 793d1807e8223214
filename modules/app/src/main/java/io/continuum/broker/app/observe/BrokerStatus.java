package io.continuum.broker.app.observe;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import io.continuum.broker.event.JsonWriter;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
import io.continuum.broker.relay.api.SessionState;

/**
 * What {@code /statusz} shows: a small snapshot the relay fills, in the relay's own types. Contains no credential and no
 * session id, stream ids, hosts or other per-target data.
 *
 * @param state            session state
 * @param stateSince       when the state was entered
 * @param clientId         configured client id
 * @param bus              router bus as {@code https://host:port}
 * @param limits           limits negotiated by {@code welcome}, while welcomed
 * @param openStreams      open data streams
 * @param metadataSynced   whether the metadata view completed its initial sync
 * @param metadataResources resources held
 * @param metadataPublishers unique publishers held
 */
public record BrokerStatus(SessionState state,
                           Instant stateSince,
                           String clientId,
                           String bus,
                           Optional<Limits> limits,
                           long openStreams,
                           boolean metadataSynced,
                           long metadataResources,
                           long metadataPublishers,
                           Details details) {

    /**
     * A status without the relay's details (before the relay runs).
     *
     * @param state              session state
     * @param stateSince         when the state was entered
     * @param clientId           configured client id
     * @param bus                router bus
     * @param limits             negotiated limits
     * @param openStreams        open data streams
     * @param metadataSynced     whether the metadata view is synced
     * @param metadataResources  resources held
     * @param metadataPublishers unique publishers held
     */
    public BrokerStatus(SessionState state, Instant stateSince, String clientId, String bus, Optional<Limits> limits,
                        long openStreams, boolean metadataSynced, long metadataResources, long metadataPublishers) {
        this(state, stateSince, clientId, bus, limits, openStreams, metadataSynced, metadataResources,
                metadataPublishers, Details.NONE);
    }

    /**
     * What an operator needs beyond the counts: each open stream with its age and bytes, the last
     * few session ends and refusals by code, and when the next attempt starts.
     *
     * @param sessionId      current session id, or null
     * @param nextAttemptAt  next attempt while backing off, or null
     * @param bufferedBytes  bytes queued toward the router across streams
     * @param streams        open streams: id, target, age, bytes each way, buffered bytes
     * @param recentEnds     the last few session ends: when, result, reason
     * @param refusalsByCode recent refusals counted by code
     */
    public record Details(String sessionId, Instant nextAttemptAt, long bufferedBytes, List<Stream> streams,
                          List<End> recentEnds, Map<Code, Long> refusalsByCode) {
        /** No details. */
        public static final Details NONE = new Details(null, null, 0, List.of(), List.of(), Map.of());

        /**
         * Copies.
         */
        public Details {
            streams = List.copyOf(streams);
            recentEnds = List.copyOf(recentEnds);
            refusalsByCode = Map.copyOf(refusalsByCode);
        }
    }

    /**
     * One open stream.
     *
     * @param id               stream id
     * @param target           {@code namespace/host:port}
     * @param ageMs            age
     * @param bytesToRouter    bytes relayed publisher to router
     * @param bytesToPublisher bytes relayed router to publisher
     * @param bufferedBytes    bytes queued toward the router
     */
    public record Stream(long id, String target, long ageMs, long bytesToRouter, long bytesToPublisher,
                         long bufferedBytes) {
    }

    /**
     * One session end.
     *
     * @param at     when
     * @param result attempt result
     * @param reason end reason
     */
    public record End(Instant at, AttemptResult result, EndReason reason) {
    }

    /**
     * Effective session limits from {@code welcome} after clamping.
     *
     * @param heartbeatIntervalMs  heartbeat interval
     * @param idleTimeoutMs        idle timeout
     * @param maxStreams           max streams
     * @param maxStreamBufferBytes per-stream buffer budget
     * @param maxFrameBytes        max frame size
     */
    public record Limits(long heartbeatIntervalMs,
                         long idleTimeoutMs,
                         long maxStreams,
                         long maxStreamBufferBytes,
                         long maxFrameBytes) {
    }

    /**
     * Renders the status as one JSON object.
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
        limits.ifPresentOrElse(l -> json.beginObject("limits")
                        .field("heartbeat_interval_ms", l.heartbeatIntervalMs())
                        .field("idle_timeout_ms", l.idleTimeoutMs())
                        .field("max_streams", l.maxStreams())
                        .field("max_stream_buffer_bytes", l.maxStreamBufferBytes())
                        .field("max_frame_bytes", l.maxFrameBytes())
                        .endObject(),
                () -> json.field("limits", null));
        json.field("open_streams", openStreams)
                .beginObject("metadata")
                .field("synced", metadataSynced)
                .field("resources", metadataResources)
                .field("publishers", metadataPublishers)
                .endObject();
        if (details != Details.NONE) {
            json.field("session_id", details.sessionId())
                    .field("next_attempt_at", details.nextAttemptAt())
                    .field("buffered_bytes", details.bufferedBytes())
                    .beginArray("streams");
            for (Stream st : details.streams()) {
                json.beginObject()
                        .field("id", st.id())
                        .field("target", st.target())
                        .field("age_ms", st.ageMs())
                        .field("bytes_to_router", st.bytesToRouter())
                        .field("bytes_to_publisher", st.bytesToPublisher())
                        .field("buffered_bytes", st.bufferedBytes())
                        .endObject();
            }
            json.endArray().beginArray("recent_session_ends");
            for (End e : details.recentEnds()) {
                json.beginObject()
                        .field("at", e.at())
                        .field("result", e.result().label())
                        .field("reason", e.reason().wire())
                        .endObject();
            }
            json.endArray().beginObject("recent_refusals");
            Map<String, Long> byWire = new TreeMap<>();
            details.refusalsByCode().forEach((code, n) -> byWire.put(code.wire(), n));
            byWire.forEach(json::field);
            json.endObject();
        }
        return json.endObject().finish();
    }
}
