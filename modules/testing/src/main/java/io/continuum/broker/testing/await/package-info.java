/** The tests' one polling wait ({@link io.continuum.broker.testing.await.Poll}). */
package io.continuum.broker.testing.await;
