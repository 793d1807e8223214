/**
 * The DynamoWorkerMetadata view: which ZMQ publishers are advertised in Kubernetes
 * (R-META, R-SEC 2-4 and 12). Knows nothing of the bus.
 */
module io.continuum.broker.metadata {
    requires com.fasterxml.jackson.core;
    requires io.kubernetes.client.java;
    requires io.kubernetes.client.java.api;
    requires okhttp3;
    requires io.continuum.broker.event;

    exports io.continuum.broker.metadata;
    exports io.continuum.broker.metadata.watch;
}
