/**
 * The relay: one HTTP/2+TLS bus connection to the router, the session stream, one data stream
 * per subscription, target validation and the address filter, bounded buffers and deadlines.
 */
module io.continuum.broker.relay {
    requires transitive io.continuum.broker.protocol;
    requires transitive io.continuum.broker.metadata;
    requires io.continuum.broker.h2;
    requires io.continuum.broker.event;
    // TCP keepalive idle/interval/count on publisher sockets (looked up by name in SocketSettings).
    requires jdk.net;

    exports io.continuum.broker.relay;
    exports io.continuum.broker.relay.api;
}
