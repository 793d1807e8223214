/**
 * The relay's front door: {@link io.continuum.broker.relay.EventBroker}, which the app starts and which wires the
 * inner packages. The types that cross between app and relay are in {@code io.continuum.broker.relay.api}, so
 * that the inner packages can use them without depending on this one.
 */
package io.continuum.broker.relay;
