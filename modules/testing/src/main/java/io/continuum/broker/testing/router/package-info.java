/**
 * Test support: router. (Not part of the product.)
 */
package io.continuum.broker.testing.router;

