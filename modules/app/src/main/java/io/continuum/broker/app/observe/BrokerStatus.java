package io.continuum.broker.app.observe;

import java.time.Instant;
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
                           long metadataPublishers) {

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
                .append("}}");
        return sb.toString();
    }

    private static StringBuilder field(StringBuilder sb, String name, String value) {
        sb.append('"').append(name).append("\":");
        return Json.string(sb, value);
    }
}
