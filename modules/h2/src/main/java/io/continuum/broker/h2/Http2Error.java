package io.continuum.broker.h2;


/**
 * A violation of RFC 9113 found while reading or writing frames, typed by its scope (section 5.4): a
 * {@link ConnectionError} ends the connection (GOAWAY with {@link #code()}), a {@link StreamError} only the stream
 * it names (RST_STREAM with {@link #code()}); the reader stays usable after a stream error.
 */
public abstract sealed class Http2Error extends Exception permits Http2Error.ConnectionError, Http2Error.StreamError {
    private final ErrorCode code;

    private Http2Error(ErrorCode code, String message) {
        super(message);
        this.code = code;
    }

    /** @return the error code to send (GOAWAY for a connection error, RST_STREAM for a stream error) */
    public ErrorCode code() {
        return code;
    }

    /** A connection error (RFC 9113 section 5.4.1): the connection cannot continue. */
    public static final class ConnectionError extends Http2Error {
        /**
         * @param code    the GOAWAY error code
         * @param message what was wrong, for logs and tests
         */
        public ConnectionError(ErrorCode code, String message) {
            super(code, message);
        }
    }

    /** A stream error (RFC 9113 section 5.4.2): only {@link #streamId()} ends. */
    public static final class StreamError extends Http2Error {
        private final int streamId;

        /**
         * @param streamId the stream to reset
         * @param code     the RST_STREAM error code
         * @param message  what was wrong
         */
        public StreamError(int streamId, ErrorCode code, String message) {
            super(code, message);
            this.streamId = streamId;
        }

        /** @return the stream to reset */
        public int streamId() {
            return streamId;
        }
    }
}
