/**
 * Test support: leak discipline ({@link io.continuum.broker.testing.leaks.LeakCheck}). (Not part of the product.)
 */
package io.continuum.broker.testing.leaks;
