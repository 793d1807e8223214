/**
 * Test support: pki. (Not part of the product.)
 */
package io.continuum.broker.testing.pki;

