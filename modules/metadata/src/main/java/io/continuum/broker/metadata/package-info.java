/**
 * What the relay and the app know of the advertised-publisher view: {@link io.continuum.broker.metadata.PublisherView}
 * and its key and answer types, and the metrics it reports. Depends on no other package of the module, so the
 * parser ({@code internal}) and the running view ({@code watch}) can both build on it.
 */
package io.continuum.broker.metadata;
