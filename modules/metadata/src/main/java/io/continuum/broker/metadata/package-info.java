/**
 * The advertised-publisher view built from {@code DynamoWorkerMetadata} resources.
 */
package io.continuum.broker.metadata;
