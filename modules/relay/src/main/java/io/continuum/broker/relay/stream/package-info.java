/**
 * One data stream per subscription (bus-protocol-v1.md sections 5 and 6, R-BUF): the dial of its target
 * ({@link io.continuum.broker.relay.stream.TargetDialer}), the two pumps between publisher socket and HTTP/2
 * stream, the bounded queue toward the router and the session's byte budget. A stream knows its session only as a
 * {@link io.continuum.broker.relay.stream.StreamContext}, which the session implements; nothing here depends on
 * {@code session} or {@code loop} (an ArchUnit rule).
 */
package io.continuum.broker.relay.stream;
