/**
 * Network values the relay is configured with, exported so the app hands them over parsed: {@link
 * io.continuum.broker.relay.net.Cidr}, one {@code allowed_cidrs} entry. A package of its own, below both the relay's
 * facade ({@code RelayConfig}) and its target checks ({@code dial}), so that both use the one type and packages
 * still depend one way.
 */
package io.continuum.broker.relay.net;
