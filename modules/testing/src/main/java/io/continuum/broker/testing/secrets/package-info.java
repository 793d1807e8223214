/**
 * Test support: the test-wide credential check ({@link io.continuum.broker.testing.secrets.Secrets},
 * {@link io.continuum.broker.testing.secrets.SecretScan}). (Not part of the product.)
 */
package io.continuum.broker.testing.secrets;
