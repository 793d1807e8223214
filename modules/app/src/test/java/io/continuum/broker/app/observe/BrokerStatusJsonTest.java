package io.continuum.broker.app.observe;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.protocol.SessionLimits;
import io.continuum.broker.relay.api.RelayStatus;
import io.continuum.broker.relay.api.RelayMetrics.AttemptResult;
import org.junit.jupiter.api.Test;
import io.continuum.broker.relay.api.SessionState;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code /statusz} for an operator: streams with age and bytes, recent ends, refusals by code. */
class BrokerStatusJsonTest {
    @Test
    void detailsListOpenStreamsRecentEndsAndRefusalsByCode() {
        Instant t = Instant.parse("2026-01-01T00:00:00Z");
        RelayStatus relay = new RelayStatus(SessionState.CONNECTED, "s-1",
                new SessionLimits(Duration.ofSeconds(10), Duration.ofSeconds(30), 1024, 1_048_576, 65_536), null, 128,
                List.of(new RelayStatus.OpenStream(17, "dynamo/10.0.0.7:5557", Duration.ofMillis(1500), 4096, 12, 128)),
                List.of(new RelayStatus.SessionEnd(t, AttemptResult.WELCOMED, EndReason.IDLE_TIMEOUT, "quiet")),
                List.of(new RelayStatus.Refusal(t, 3, Code.TARGET_NOT_ALLOWED, "not advertised"),
                        new RelayStatus.Refusal(t, 5, Code.DRAINING, "draining"),
                        new RelayStatus.Refusal(t, 7, Code.TARGET_NOT_ALLOWED, "not advertised")));
        BrokerStatus status = BrokerStatus.relaying(relay, t, "broker-a", "https://r:443",
                new BrokerStatus.Metadata(true, 3, 2));
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

    @Test
    void valuesAreEscapedByTheOneJsonWriterIntoOneLineOfAscii() {
        BrokerStatus status = BrokerStatus.withoutRelay(SessionState.IDLE, Instant.EPOCH, "a\"b\\c\n\u00e9\u007f",
                "https://r");
        String json = status.toJson("v");
        assertTrue(json.contains("\"client_id\":\"a\\\"b\\\\c\\n\\u00E9\\u007F\""), json);
        assertTrue(json.chars().allMatch(c -> c >= 0x20 && c < 0x7f), json);
        assertTrue(json.contains("\"state\":\"idle\""), json);
        assertTrue(json.contains("\"limits\":null"), json);
    }
}
