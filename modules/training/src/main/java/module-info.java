/**
 * The peers {@code lib/aot-train} relays through the broker while the JDK records the broker's AOT cache: a router
 * (TLS, HTTP/2 on the project's own frame codec, bus-protocol-v1), a Kubernetes API server that lists the
 * publishers, and the publishers, all on loopback and all in a JVM of their own, so that nothing of theirs enters
 * the broker's cache or its module path. Runs as {@code java -m io.continuum.broker.training/...AotTraining}.
 */
module io.continuum.broker.training {
    requires io.continuum.broker.h2;
    requires io.continuum.broker.protocol;
}
