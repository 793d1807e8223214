package io.continuum.broker.relay.session;

import java.util.List;

import io.continuum.broker.protocol.BusProtocol;
import io.continuum.broker.relay.api.Credential;
import io.continuum.broker.relay.transport.Header;
import io.continuum.broker.relay.transport.StreamRequest;

/**
 * The request heads of one session: the session stream's and each data stream's (bus-protocol-v1.md sections 2
 * and 5). The only holder of the attempt's credential, which it forgets when the session ends.
 */
final class SessionHeaders {
    private final String userAgent;
    private volatile Credential credential;
    private volatile String sessionId;

    SessionHeaders(Credential credential, String userAgent) {
        this.credential = credential;
        this.userAgent = userAgent;
    }

    StreamRequest session() {
        return new StreamRequest("POST", BusProtocol.SESSION_PATH, List.of(
                Header.bearer(credential()),
                Header.of("content-type", BusProtocol.SESSION_CONTENT_TYPE),
                Header.of("user-agent", userAgent)));
    }

    StreamRequest dataStream(long streamId) {
        return new StreamRequest("POST", BusProtocol.streamPath(streamId), List.of(
                Header.bearer(credential()),
                Header.of(BusProtocol.SESSION_ID_HEADER, sessionId),
                Header.of("content-type", BusProtocol.STREAM_CONTENT_TYPE),
                Header.of("user-agent", userAgent)));
    }

    String userAgent() {
        return userAgent;
    }

    /** The id {@code welcome} gave, or null before it. */
    String sessionId() {
        return sessionId;
    }

    void welcomed(String id) {
        sessionId = id;
    }

    /** After the session: a stream still opening sends an empty credential rather than keep the secret alive. */
    void forgetCredential() {
        credential = null;
    }

    private String credential() {
        Credential c = credential;
        return c == null ? "" : c.reveal();
    }
}
