package io.continuum.broker.relay.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.relay.transport.Header;
import io.continuum.broker.relay.transport.ResponseHead;

/**
 * Section 2's checks on the session stream's response head, alone: the session tests reach them only through a
 * whole handshake, one answer per router.
 */
class HeadCheckTest {
    @ParameterizedTest
    @ValueSource(strings = {"application/x-continuum-bus", "Application/X-Continuum-Bus; charset=binary",
            " application/x-continuum-bus ;v=1"})
    void status200WithTheBusMediaTypePasses(String contentType) {
        assertTrue(HeadCheck.check(head(200, contentType, null)).isEmpty());
    }

    @Test
    void aWrongOrMissingMediaTypeIsAProtocolError() {
        HeadCheck.Refusal wrong = HeadCheck.check(head(200, "application/json", null)).orElseThrow();
        assertEquals(EndReason.PROTOCOL_ERROR, wrong.reason());
        assertEquals(EndReason.PROTOCOL_ERROR, HeadCheck.check(head(200, null, null)).orElseThrow().reason());
    }

    @Test
    void a503CarriesItsRetryAfterInWholeSeconds() {
        HeadCheck.Refusal r = HeadCheck.check(head(503, null, " 7 ")).orElseThrow();
        assertEquals(EndReason.REFUSED, r.reason());
        assertEquals(Duration.ofSeconds(7), r.retryAfter());
        assertEquals("router answered HTTP 503", r.detail());
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1", "soon", "Wed, 21 Oct 2026 07:28:00 GMT", ""})
    void aRetryAfterThatIsNotWholeSecondsIsIgnored(String value) {
        assertNull(HeadCheck.check(head(503, null, value)).orElseThrow().retryAfter());
    }

    @Test
    void onlyA503sRetryAfterCounts() {
        HeadCheck.Refusal r = HeadCheck.check(head(429, null, "7")).orElseThrow();
        assertEquals(EndReason.REFUSED, r.reason());
        assertNull(r.retryAfter());
    }

    private static ResponseHead head(int status, String contentType, String retryAfter) {
        List<Header> headers = new ArrayList<>();
        if (contentType != null) {
            headers.add(Header.of("content-type", contentType));
        }
        if (retryAfter != null) {
            headers.add(Header.of("retry-after", retryAfter));
        }
        return new ResponseHead(status, headers);
    }
}
