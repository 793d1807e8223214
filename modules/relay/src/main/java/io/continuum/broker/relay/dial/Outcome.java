package io.continuum.broker.relay.dial;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Objects;

import io.continuum.broker.protocol.Code;

/**
 * How one subscribe's target check and dial ended (bus-protocol-v1.md section 5 rows 4-10).
 */
public sealed interface Outcome {
    /**
     * Every check passed and a TCP connection is open. The receiver owns the socket and must close
     * it.
     *
     * @param socket connected socket, options already applied
     * @param remote exactly the address that passed the filter, and the port
     */
    record Connected(Socket socket, InetSocketAddress remote) implements Outcome {
        /**
         * Validates.
         */
        public Connected {
            Objects.requireNonNull(socket, "socket");
            Objects.requireNonNull(remote, "remote");
        }
    }

    /**
     * A check failed: answer {@code stream_refused} with {@code code}; nothing is open.
     *
     * @param code   refusal code
     * @param reason short log-safe reason (no credential, no resolved address), at most 256
     *               characters, usable as the frame's {@code message}
     */
    record Refused(Code code, String reason) implements Outcome {
        /**
         * Validates.
         */
        public Refused {
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(reason, "reason");
            if (reason.length() > 256) {
                reason = reason.substring(0, 256);
            }
        }
    }

    /**
     * The attempt was cancelled ({@code unsubscribe} or session end) before it finished: report
     * nothing; any socket it had opened is closed.
     */
    record Cancelled() implements Outcome {
        /** The one instance. */
        public static final Cancelled INSTANCE = new Cancelled();
    }
}
