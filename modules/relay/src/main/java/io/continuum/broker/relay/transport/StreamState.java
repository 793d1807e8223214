package io.continuum.broker.relay.transport;

/**
 * The life of one bus stream as this transport sees it (RFC 9113 section 5.1, reduced to what a client stream
 * that is opened with HEADERS can go through). Terminal states release the stream slot.
 */
enum StreamState {
    /** HEADERS sent, both bodies flowing. */
    OPEN,
    /** END_STREAM sent, response still flowing. */
    HALF_CLOSED_LOCAL,
    /** END_STREAM received, request body still flowing. */
    HALF_CLOSED_REMOTE,
    /** END_STREAM both ways. */
    CLOSED,
    /** RST_STREAM received, or cancelled locally. */
    RESET,
    /** The connection died. */
    LOST;

    boolean terminal() {
        return this == CLOSED || this == RESET || this == LOST;
    }

    boolean localOpen() {
        return this == OPEN || this == HALF_CLOSED_REMOTE;
    }

    boolean remoteOpen() {
        return this == OPEN || this == HALF_CLOSED_LOCAL;
    }

    /** @return the state after sending END_STREAM */
    StreamState onLocalEnd() {
        return switch (this) {
            case OPEN -> HALF_CLOSED_LOCAL;
            case HALF_CLOSED_REMOTE -> CLOSED;
            default -> this;
        };
    }

    /** @return the state after receiving END_STREAM */
    StreamState onRemoteEnd() {
        return switch (this) {
            case OPEN -> HALF_CLOSED_REMOTE;
            case HALF_CLOSED_LOCAL -> CLOSED;
            default -> this;
        };
    }
}
