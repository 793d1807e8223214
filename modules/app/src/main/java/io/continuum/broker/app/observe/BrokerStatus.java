package io.continuum.broker.app.observe;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code /statusz} shows: a small snapshot the relay fills. Contains no credential and no
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
                          List<End> recentEnds, Map<String, Long> refusalsByCode) {
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
    public record End(Instant at, String result, String reason) {
    }

    /**
     * Session states as shown in {@code /statusz}.
     */
    public enum SessionState {
        /** Waiting for the initial metadata sync; the bus is not dialed yet (R-BEH-1). */
        SYNCING("syncing"),
        /** Dialing the bus or waiting for {@code welcome}. */
        CONNECTING("connecting"),
        /** Welcomed. */
        CONNECTED("connected"),
        /** Between attempts. */
        BACKOFF("backoff"),
        /** Draining for a router {@code drain} or a local shutdown. */
        DRAINING("draining"),
        /** The relay is not running (observability only). */
        IDLE("idle");

        private final String text;

        SessionState(String text) {
            this.text = text;
        }

        @Override
        public String toString() {
            return text;
        }
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
        StringBuilder sb = new StringBuilder(256).append('{');
        field(sb, "version", version).append(',');
        field(sb, "state", state.toString()).append(',');
        field(sb, "state_since", stateSince.toString()).append(',');
        field(sb, "client_id", clientId).append(',');
        field(sb, "bus", bus).append(',');
        sb.append("\"limits\":");
        limits.ifPresentOrElse(l -> sb.append("{\"heartbeat_interval_ms\":").append(l.heartbeatIntervalMs())
                                       .append(",\"idle_timeout_ms\":").append(l.idleTimeoutMs())
                                       .append(",\"max_streams\":").append(l.maxStreams())
                                       .append(",\"max_stream_buffer_bytes\":").append(l.maxStreamBufferBytes())
                                       .append(",\"max_frame_bytes\":").append(l.maxFrameBytes())
                                       .append('}'),
                               () -> sb.append("null"));
        sb.append(",\"open_streams\":").append(openStreams)
                .append(",\"metadata\":{\"synced\":").append(metadataSynced)
                .append(",\"resources\":").append(metadataResources)
                .append(",\"publishers\":").append(metadataPublishers)
                .append('}');
        if (details != Details.NONE) {
            sb.append(",\"session_id\":");
            nullable(sb, details.sessionId());
            sb.append(",\"next_attempt_at\":");
            nullable(sb, details.nextAttemptAt() == null ? null : details.nextAttemptAt().toString());
            sb.append(",\"buffered_bytes\":").append(details.bufferedBytes()).append(",\"streams\":[");
            for (int i = 0; i < details.streams().size(); i++) {
                Stream st = details.streams().get(i);
                sb.append(i == 0 ? "" : ",").append("{\"id\":").append(st.id()).append(',');
                field(sb, "target", st.target()).append(",\"age_ms\":").append(st.ageMs())
                        .append(",\"bytes_to_router\":").append(st.bytesToRouter())
                        .append(",\"bytes_to_publisher\":").append(st.bytesToPublisher())
                        .append(",\"buffered_bytes\":").append(st.bufferedBytes()).append('}');
            }
            sb.append("],\"recent_session_ends\":[");
            for (int i = 0; i < details.recentEnds().size(); i++) {
                End e = details.recentEnds().get(i);
                sb.append(i == 0 ? "{" : ",{");
                field(sb, "at", e.at().toString()).append(',');
                field(sb, "result", e.result()).append(',');
                field(sb, "reason", e.reason()).append('}');
            }
            sb.append("],\"recent_refusals\":{");
            int i = 0;
            for (Map.Entry<String, Long> r : new java.util.TreeMap<>(details.refusalsByCode()).entrySet()) {
                sb.append(i++ == 0 ? "" : ",");
                Json.string(sb, r.getKey()).append(':').append(r.getValue());
            }
            sb.append('}');
        }
        return sb.append('}').toString();
    }

    private static void nullable(StringBuilder sb, String value) {
        if (value == null) {
            sb.append("null");
        } else {
            Json.string(sb, value);
        }
    }

    private static StringBuilder field(StringBuilder sb, String name, String value) {
        sb.append('"').append(name).append("\":");
        return Json.string(sb, value);
    }
}
