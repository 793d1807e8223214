/**
 * The relay's public face: what the app starts and observes.
 */
package io.continuum.broker.relay;
