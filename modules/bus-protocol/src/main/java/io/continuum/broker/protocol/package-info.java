/**
 * Bus protocol v1 (../shared/spec/bus-protocol-v1.md sections 3, 5 and 7).
 */
package io.continuum.broker.protocol;
