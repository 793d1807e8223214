/**
 * Test support: kube. (Not part of the product.)
 */
package io.continuum.broker.testing.kube;

