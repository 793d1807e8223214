/**
 * The running view: lists and watches {@code DynamoWorkerMetadata} through the Kubernetes API and serves
 * the module's {@link io.continuum.broker.metadata.PublisherView} from what it read. Sits on top of the
 * module: it uses the parser and catalog of {@code metadata.internal} and the API types of
 * {@code io.continuum.broker.metadata}, and neither of those uses it.
 */
package io.continuum.broker.metadata.watch;
