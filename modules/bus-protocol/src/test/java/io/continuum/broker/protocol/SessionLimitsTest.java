package io.continuum.broker.protocol;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** bus-protocol-v1.md section 3.2: defaults for missing limits, then the client's clamps. */
class SessionLimitsTest {

    @Test
    void aWelcomeThatNamesNoLimitsGetsTheDefaults() {
        SessionLimits limits = SessionLimits.negotiate(TestFrames.WELCOME_NO_LIMITS);
        assertEquals(new SessionLimits(Duration.ofSeconds(10), Duration.ofSeconds(30), 1_024, 1_048_576, 65_536), limits);
        assertEquals(SessionLimits.DEFAULTS, limits);
    }

    @Test
    void theSpecExampleWelcomeIsTakenAsIs() {
        assertEquals(SessionLimits.DEFAULTS, SessionLimits.negotiate(TestFrames.WELCOME_ALL_LIMITS));
    }

    @ParameterizedTest(name = "heartbeat={0} idle={1} streams={2} buffer={3} frame={4}")
    @CsvSource(textBlock = """
            # heartbeat, idle, streams, buffer, frame -> heartbeat, idle, streams, buffer, frame
            # heartbeat clamped to [100 ms, 60 s]
            99,          ABSENT, ABSENT, ABSENT, ABSENT,  100,   30000, 1024, 1048576, 65536
            100,         ABSENT, ABSENT, ABSENT, ABSENT,  100,   30000, 1024, 1048576, 65536
            0,           ABSENT, ABSENT, ABSENT, ABSENT,  100,   30000, 1024, 1048576, 65536
            -5,          ABSENT, ABSENT, ABSENT, ABSENT,  100,   30000, 1024, 1048576, 65536
            60000,       ABSENT, ABSENT, ABSENT, ABSENT,  60000, 180000, 1024, 1048576, 65536
            60001,       ABSENT, ABSENT, ABSENT, ABSENT,  60000, 180000, 1024, 1048576, 65536
            9223372036854775807, ABSENT, ABSENT, ABSENT, ABSENT, 60000, 180000, 1024, 1048576, 65536
            # idle timeout at least 3 x the (clamped) heartbeat; no upper clamp
            10000,       29999,  ABSENT, ABSENT, ABSENT,  10000, 30000, 1024, 1048576, 65536
            10000,       30000,  ABSENT, ABSENT, ABSENT,  10000, 30000, 1024, 1048576, 65536
            10000,       30001,  ABSENT, ABSENT, ABSENT,  10000, 30001, 1024, 1048576, 65536
            20000,       ABSENT, ABSENT, ABSENT, ABSENT,  20000, 60000, 1024, 1048576, 65536
            ABSENT,      1,      ABSENT, ABSENT, ABSENT,  10000, 30000, 1024, 1048576, 65536
            50,          250,    ABSENT, ABSENT, ABSENT,  100,   300,   1024, 1048576, 65536
            50,          299,    ABSENT, ABSENT, ABSENT,  100,   300,   1024, 1048576, 65536
            ABSENT,      -1,     ABSENT, ABSENT, ABSENT,  10000, 30000, 1024, 1048576, 65536
            ABSENT,      3600000, ABSENT, ABSENT, ABSENT, 10000, 3600000, 1024, 1048576, 65536
            # max_streams clamped to [1, 65,536]
            ABSENT,      ABSENT, 0,      ABSENT, ABSENT,  10000, 30000, 1,     1048576, 65536
            ABSENT,      ABSENT, 1,      ABSENT, ABSENT,  10000, 30000, 1,     1048576, 65536
            ABSENT,      ABSENT, 65536,  ABSENT, ABSENT,  10000, 30000, 65536, 1048576, 65536
            ABSENT,      ABSENT, 65537,  ABSENT, ABSENT,  10000, 30000, 65536, 1048576, 65536
            ABSENT,      ABSENT, -9223372036854775808, ABSENT, ABSENT, 10000, 30000, 1, 1048576, 65536
            # per-stream buffer clamped to [16,384, 1,048,576]
            ABSENT,      ABSENT, ABSENT, 16383,   ABSENT, 10000, 30000, 1024, 16384,   65536
            ABSENT,      ABSENT, ABSENT, 16384,   ABSENT, 10000, 30000, 1024, 16384,   65536
            ABSENT,      ABSENT, ABSENT, 65536,   ABSENT, 10000, 30000, 1024, 65536,   65536
            ABSENT,      ABSENT, ABSENT, 1048576, ABSENT, 10000, 30000, 1024, 1048576, 65536
            ABSENT,      ABSENT, ABSENT, 1048577, ABSENT, 10000, 30000, 1024, 1048576, 65536
            # max_frame_bytes clamped to [4,096, 1,048,576]
            ABSENT,      ABSENT, ABSENT, ABSENT, 4095,    10000, 30000, 1024, 1048576, 4096
            ABSENT,      ABSENT, ABSENT, ABSENT, 4096,    10000, 30000, 1024, 1048576, 4096
            ABSENT,      ABSENT, ABSENT, ABSENT, 1048576, 10000, 30000, 1024, 1048576, 1048576
            ABSENT,      ABSENT, ABSENT, ABSENT, 1048577, 10000, 30000, 1024, 1048576, 1048576
            ABSENT,      ABSENT, ABSENT, ABSENT, 0,       10000, 30000, 1024, 1048576, 4096
            """)
    void defaultsThenClamps(String heartbeat, String idle, String streams, String buffer, String frame,
                            long wantHeartbeat, long wantIdle, int wantStreams, int wantBuffer, int wantFrame) {
        Frame.Welcome welcome = new Frame.Welcome(1, "s", opt(heartbeat), opt(idle), opt(streams), opt(buffer), opt(frame));
        assertEquals(new SessionLimits(Duration.ofMillis(wantHeartbeat), Duration.ofMillis(wantIdle), wantStreams,
                wantBuffer, wantFrame), SessionLimits.negotiate(welcome));
    }

    @Test
    void negotiatedLimitsComeFromTheDecodedWelcome() throws ProtocolException {
        Frame.Welcome welcome = (Frame.Welcome) FrameCodec.decodeRouterFrame(TestFrames.utf8(
                "{\"type\":\"welcome\",\"protocol_version\":1,\"session_id\":\"s\",\"heartbeat_interval_ms\":1e3,"
                        + "\"max_frame_bytes\":1e30,\"max_streams\":-1e30}"));
        assertEquals(new SessionLimits(Duration.ofSeconds(1), Duration.ofSeconds(30), 1, 1_048_576, 1_048_576),
                SessionLimits.negotiate(welcome));
    }

    private static OptionalLong opt(String value) {
        return value.equals("ABSENT") ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(value));
    }
}
