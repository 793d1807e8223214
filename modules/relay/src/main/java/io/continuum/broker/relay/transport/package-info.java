/**
 * The bus transport: one HTTP/2 over TLS connection to the router carrying many long-lived
 * full-duplex streams.
 *
 * <p>The rest of the relay sees only {@link io.continuum.broker.relay.transport.BusConnector},
 * {@link io.continuum.broker.relay.transport.BusConnection} and
 * {@link io.continuum.broker.relay.transport.BusStream}, implemented by {@code Http2BusConnector},
 * {@code Http2BusConnection} and {@code Http2BusStream} on the project's frame codec
 * ({@code io.continuum.broker.h2}): one reader, one writer, stream ids assigned by the connection.
 * Internal to the relay module: not exported.
 */
package io.continuum.broker.relay.transport;
