/**
 * Real in-process peers for tests and the demo: an ephemeral PKI, a TLS HTTP/2 test router, a fake
 * Kubernetes API server and ZMQ publishers. Never a dependency of the production modules.
 */
module io.continuum.broker.testing {
    requires transitive io.continuum.broker.protocol;
    requires transitive io.continuum.broker.h2;
    requires io.helidon.webserver;
    requires io.helidon.webserver.http2;
    requires io.helidon.http.http2;
    requires com.fasterxml.jackson.core;
    // The in-process router's Netty stack (Http2Stack.NETTY): on the class path only where a test module adds it.
    requires static io.netty.codec.http2;
    requires static io.netty.handler;
    requires static io.netty.transport;
    requires static io.netty.buffer;
    requires static io.netty.common;
    requires org.bouncycastle.pkix;
    requires org.bouncycastle.provider;
    requires org.zeromq.jeromq;
    requires java.logging;
    requires java.management;
    requires jdk.management;
    // The JUnit extensions (leaks, secrets) are used by tests only; demo code never loads them.
    requires static org.junit.jupiter.api;

    exports io.continuum.broker.testing.await;
    exports io.continuum.broker.testing.pki;
    exports io.continuum.broker.testing.kube;
    exports io.continuum.broker.testing.router;
    exports io.continuum.broker.testing.bus;
    exports io.continuum.broker.testing.leaks;
    exports io.continuum.broker.testing.secrets;
    exports io.continuum.broker.testing.logs;
    exports io.continuum.broker.testing.net;
}
