/**
 * The continuum-event-broker program: main, configuration, observability, signals.
 */
module io.continuum.broker.app {
    requires io.continuum.broker.relay;
    requires io.helidon.webserver;
    requires io.helidon.config;
    requires io.helidon.config.yaml;
    requires io.helidon.metrics.api;
    requires io.helidon.webserver.observe.metrics;
    requires io.helidon.health;
    requires java.logging;

    exports io.continuum.broker.app;
}
