/**
 * What crosses between the app and the relay, both ways: what the app hands in ({@link
 * io.continuum.broker.relay.api.RelayConfig} with its {@link io.continuum.broker.relay.api.Credential} and
 * {@link io.continuum.broker.relay.api.ReconnectBackoff}), what the relay reports ({@link
 * io.continuum.broker.relay.api.RelayMetrics}) and what it shows ({@link io.continuum.broker.relay.api.RelayStatus}).
 * Its own package so that the relay's inner packages can use these types while the facade {@code EventBroker}
 * uses them: dependencies run one way.
 */
package io.continuum.broker.relay.api;
