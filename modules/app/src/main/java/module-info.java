/**
 * The continuum-event-broker program: main, configuration, credential and CA bundle loading,
 * observability (metrics, health, readiness, status), logging and signal handling.
 * Only {@code io.continuum.broker.app} (the {@code Main} class) is exported; everything else is internal.
 */
module io.continuum.broker.app {
    requires io.continuum.broker.relay;
    requires io.kubernetes.client.java.api;
    requires io.helidon.webserver;
    requires org.yaml.snakeyaml;
    requires io.helidon.metrics.api;
    requires micrometer.core;
    requires io.helidon.common.media.type;
    requires io.continuum.broker.event;
    requires java.logging;
    requires java.management;
    requires jdk.management;
    requires jdk.unsupported;

    exports io.continuum.broker.app;

    // /metrics finds Helidon's Micrometer formatter with the JDK's ServiceLoader (MetricsEndpoint).
    uses io.helidon.metrics.spi.MeterRegistryFormatterProvider;
}
