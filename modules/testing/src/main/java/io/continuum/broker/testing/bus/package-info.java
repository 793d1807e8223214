/**
 * A protocol-level in-process router (the bus server side of bus-protocol-v1.md) for tests and
 * the demo: TLS, HTTP/2, session and data streams, scriptable by the caller. Not part of the product.
 */
package io.continuum.broker.testing.bus;
