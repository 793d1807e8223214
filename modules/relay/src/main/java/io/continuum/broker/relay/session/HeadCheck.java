package io.continuum.broker.relay.session;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

import io.continuum.broker.protocol.BusProtocol;
import io.continuum.broker.protocol.EndReason;
import io.continuum.broker.relay.transport.ResponseHead;

/**
 * The checks on the session stream's response head (bus-protocol-v1.md section 2): status 200 and the bus media
 * type, or the attempt is refused. A 503's {@code Retry-After} (whole seconds) stretches the next backoff.
 */
final class HeadCheck {
    /**
     * Why the head refuses the session.
     *
     * @param reason     {@code refused} for a status other than 200, {@code protocol_error} for a wrong media type
     * @param detail     log-safe detail
     * @param retryAfter a 503's {@code Retry-After}, or null
     */
    record Refusal(EndReason reason, String detail, Duration retryAfter) {
    }

    private HeadCheck() {
    }

    static Optional<Refusal> check(ResponseHead head) {
        if (head.status() != 200) {
            Duration retryAfter = head.status() == 503
                    ? head.header("retry-after").flatMap(HeadCheck::parseRetryAfter).orElse(null) : null;
            return Optional.of(new Refusal(EndReason.REFUSED, "router answered HTTP " + head.status(), retryAfter));
        }
        Optional<String> contentType = head.header("content-type");
        if (contentType.isEmpty() || !mediaType(contentType.get()).equals(BusProtocol.SESSION_CONTENT_TYPE)) {
            return Optional.of(new Refusal(EndReason.PROTOCOL_ERROR,
                    "session response content-type is not " + BusProtocol.SESSION_CONTENT_TYPE, null));
        }
        return Optional.empty();
    }

    static Optional<Duration> parseRetryAfter(String value) {
        try {
            long seconds = Long.parseLong(value.trim());
            return seconds >= 0 ? Optional.of(Duration.ofSeconds(seconds)) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static String mediaType(String contentType) {
        int semi = contentType.indexOf(';');
        return (semi < 0 ? contentType : contentType.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
    }
}
