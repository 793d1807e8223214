package io.continuum.broker.relay.transport;

import java.time.Duration;

import io.helidon.common.socket.SocketContext;
import io.helidon.http.http2.Http2Settings;
import io.helidon.http.http2.Http2WindowUpdate;
import io.helidon.webclient.http2.Http2ClientConnection;
import io.helidon.webclient.http2.Http2ClientImpl;
import io.helidon.webclient.http2.Http2ClientStream;
import io.helidon.webclient.http2.Http2StreamConfig;

/**
 * Helidon's client stream, used for HEADERS (HPACK state lives in Helidon's connection writer) and for reading
 * the response (Helidon's reader thread decodes headers and queues DATA per stream). Outbound DATA and all flow
 * control are the transport's own ({@link InboundFrameSniffer}), so inbound stream WINDOW_UPDATEs are kept out
 * of Helidon's per-stream accounting, which is unused here (and, in 4.5.0, adds each increment twice).
 */
final class BusClientStream extends Http2ClientStream {
    private BusClientStream(Http2ClientConnection connection, Http2ClientImpl client, Http2StreamConfig config,
                            SocketContext ctx) {
        super(connection, Http2Settings.create(), ctx, config, client.prototype(), connection.streamIdSequence(),
                client);
    }

    static BusClientStream create(Http2ClientConnection connection, Http2ClientImpl client, SocketContext ctx,
                                  Duration readTimeout) {
        Http2StreamConfig config = new Http2StreamConfig() {
            @Override
            public boolean priorKnowledge() {
                return true;
            }

            @Override
            public int priority() {
                return 0;
            }

            @Override
            public Duration readTimeout() {
                return readTimeout;
            }
        };
        return new BusClientStream(connection, client, config, ctx);
    }

    @Override
    public void windowUpdate(Http2WindowUpdate windowUpdate) {
        // the transport tracks the peer's stream windows itself (InboundFrameSniffer)
    }
}
