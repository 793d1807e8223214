package io.continuum.broker.app.observe;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@code /statusz} for an operator: streams with age and bytes, recent ends, refusals by code. */
class BrokerStatusJsonTest {
    @Test
    void detailsListOpenStreamsRecentEndsAndRefusalsByCode() {
        Instant t = Instant.parse("2026-01-01T00:00:00Z");
        BrokerStatus status = new BrokerStatus(BrokerStatus.SessionState.CONNECTED, t, "broker-a", "https://r:443",
                Optional.of(new BrokerStatus.Limits(10_000, 30_000, 1024, 1_048_576, 65_536)), 1, true, 3, 2,
                new BrokerStatus.Details("s-1", null, 128,
                        List.of(new BrokerStatus.Stream(17, "dynamo/10.0.0.7:5557", 1500, 4096, 12, 128)),
                        List.of(new BrokerStatus.End(t, "welcomed", "idle_timeout")),
                        Map.of("target_not_allowed", 2L, "draining", 1L)));
        assertEquals("{\"version\":\"v\",\"state\":\"connected\",\"state_since\":\"2026-01-01T00:00:00Z\","
                + "\"client_id\":\"broker-a\",\"bus\":\"https://r:443\",\"limits\":{\"heartbeat_interval_ms\":10000,"
                + "\"idle_timeout_ms\":30000,\"max_streams\":1024,\"max_stream_buffer_bytes\":1048576,"
                + "\"max_frame_bytes\":65536},\"open_streams\":1,\"metadata\":{\"synced\":true,\"resources\":3,"
                + "\"publishers\":2},\"session_id\":\"s-1\",\"next_attempt_at\":null,\"buffered_bytes\":128,"
                + "\"streams\":[{\"id\":17,\"target\":\"dynamo/10.0.0.7:5557\",\"age_ms\":1500,\"bytes_to_router\":4096,"
                + "\"bytes_to_publisher\":12,\"buffered_bytes\":128}],\"recent_session_ends\":[{\"at\":"
                + "\"2026-01-01T00:00:00Z\",\"result\":\"welcomed\",\"reason\":\"idle_timeout\"}],"
                + "\"recent_refusals\":{\"draining\":1,\"target_not_allowed\":2}}", status.toJson("v"));
    }
}
