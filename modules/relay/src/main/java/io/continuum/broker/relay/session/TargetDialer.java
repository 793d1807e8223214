package io.continuum.broker.relay.session;

import java.net.Socket;
import java.util.Objects;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Target;

/**
 * Runs the target checks of bus-protocol-v1.md section 5 rows 4-10 for one {@code subscribe}
 * and, when every check passes, returns a socket connected to the publisher. Cancelled by
 * interrupting the calling thread: a dial in progress is abandoned and its socket closed.
 */
@FunctionalInterface
public interface TargetDialer {
    /**
     * Checks and dials.
     *
     * @param target the subscribe's target
     * @return connected socket or refusal
     * @throws InterruptedException when the subscribe was aborted meanwhile
     */
    DialResult dial(Target target) throws InterruptedException;

    /** Result of {@link #dial}. */
    sealed interface DialResult {
        /**
         * Every check passed and the socket is connected.
         *
         * @param socket connected publisher socket (owned by the caller from now on)
         */
        record Connected(Socket socket) implements DialResult {
            /** Validates. */
            public Connected {
                Objects.requireNonNull(socket, "socket");
            }
        }

        /**
         * A check failed; nothing is connected.
         *
         * @param code   refusal code
         * @param reason short, log-safe reason
         */
        record Refused(Code code, String reason) implements DialResult {
            /** Validates. */
            public Refused {
                Objects.requireNonNull(code, "code");
            }
        }
    }
}
