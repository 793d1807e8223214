/**
 * The bus transport: one HTTP/2 over TLS connection to the router carrying many long-lived
 * full-duplex streams.
 *
 * <p>The rest of the relay sees only {@link io.continuum.broker.relay.transport.BusConnector},
 * {@link io.continuum.broker.relay.transport.BusConnection} and
 * {@link io.continuum.broker.relay.transport.BusStream}; every quirk of the HTTP/2 stack in use
 * (Helidon 4.5.0's client) is contained in the {@code Helidon*} classes of this package, so another
 * stack could replace it in one place. Internal to the relay module: not exported.
 */
package io.continuum.broker.relay.transport;
