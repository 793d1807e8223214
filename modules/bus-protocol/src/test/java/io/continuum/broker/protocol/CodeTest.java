package io.continuum.broker.protocol;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/** bus-protocol-v1.md section 7: one enum, unrecognized values map to {@code unknown}. */
class CodeTest {
    @ParameterizedTest
    @EnumSource(Code.class)
    void everyCodeRoundTripsThroughItsWireName(Code code) {
        assertSame(code, Code.fromWire(code.wire()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "UNSUPPORTED_TARGET", "Draining", "stream_closed", "unknown_code", " draining"})
    void unrecognizedWireValuesMapToUnknown(String wire) {
        assertSame(Code.UNKNOWN, Code.fromWire(wire));
    }

    @Test
    void nullMapsToUnknown() {
        assertSame(Code.UNKNOWN, Code.fromWire(null));
    }

    @Test
    void theEnumHasExactlyTheSpecifiedSeventeenCodes() {
        assertEquals(17, Code.values().length);
        assertEquals("unsupported_target,target_not_advertised,target_not_allowed,upstream_connect_failed,"
                        + "too_many_streams,duplicate_stream,draining,idle_timeout,upstream_closed,buffer_overflow,"
                        + "unknown_stream,protocol_error,unauthorized,unsupported_version,superseded,internal_error,unknown",
                String.join(",", java.util.Arrays.stream(Code.values()).map(Code::wire).toList()));
    }
}
