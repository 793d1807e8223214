package io.continuum.broker.relay.dial;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Objects;

import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.protocol.Code;

/**
 * How one {@code subscribe}'s target checks and dial ended (bus-protocol-v1.md section 5 rows 4-10): the only
 * answer {@link TargetCheck#checkAndConnect} gives, a cancellation included.
 */
public sealed interface DialResult {
    /**
     * Every check passed and a TCP connection is open. The receiver owns the socket and must close it.
     *
     * @param key    the publisher as the metadata view advertises it
     * @param socket connected socket, options already applied
     * @param remote exactly the address that passed the filter, and the port
     */
    record Connected(PublisherKey key, Socket socket, InetSocketAddress remote) implements DialResult {
        /** Validates. */
        public Connected {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(socket, "socket");
            Objects.requireNonNull(remote, "remote");
        }
    }

    /**
     * A check failed: answer {@code stream_refused} with {@code code}; nothing is open.
     *
     * @param code   refusal code
     * @param reason short log-safe reason (no credential, no resolved address), at most 256 characters, usable as
     *               the frame's {@code message}
     */
    record Refused(Code code, String reason) implements DialResult {
        /** Validates and cuts the reason to 256 characters. */
        public Refused {
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(reason, "reason");
            if (reason.length() > 256) {
                reason = reason.substring(0, 256);
            }
        }
    }

    /**
     * The dialing thread was interrupted ({@code unsubscribe}, revocation or session end) before the result was
     * known: report nothing; any socket the dial had opened is closed.
     */
    record Cancelled() implements DialResult {
        /** The one instance. */
        public static final Cancelled INSTANCE = new Cancelled();
    }
}
