package io.continuum.broker.testing.bus;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Map;

/**
 * One request stream of the {@link InProcessRouter}, whichever HTTP/2 server stack carries it ({@link Http2Stack}):
 * the router's session and data stream logic is written once against this, so the relay's end-to-end tests run
 * unchanged on Helidon's server and on Netty's {@code codec-http2}.
 */
interface Exchange {
    /** @return the request path, e.g. {@code /bus/v1/streams/17} */
    String path();

    /** @return every request header (lower-case names, first value), pseudo-headers left out */
    Map<String, String> headers();

    /** @return the request body; not reading it withholds flow-control window from the broker */
    InputStream requestBody();

    /** A complete response: status, headers and body, then END_STREAM. */
    void respond(int status, Map<String, String> headers, byte[] body) throws IOException;

    /**
     * Sends the status and headers now (HEADERS without END_STREAM).
     *
     * @return the response body: each write is flushed to the broker; {@code close} ends it (END_STREAM)
     */
    OutputStream startResponse(int status, Map<String, String> headers) throws IOException;

    /**
     * An informational head (1xx: HEADERS without END_STREAM) before the response's final one, as a router's stack
     * sends {@code 103 Early Hints} or {@code 100 Continue} (RFC 9113 section 8.1).
     *
     * @throws UnsupportedOperationException on a stack that cannot send one
     */
    void informational(int status, Map<String, String> headers) throws IOException;

    /** RST_STREAM CANCEL. */
    void reset();

    /** Opens the connection's receive window by {@code increment} bytes (WINDOW_UPDATE on stream 0). */
    void openConnectionWindow(int increment);

    /** What the router does with each exchange, on a thread of the exchange's own that may block. */
    @FunctionalInterface
    interface Handler {
        void serve(Exchange exchange) throws Exception;
    }
}
