/**
 * One session attempt, from connect to its one end (bus-protocol-v1.md sections 2, 4 and 5): the handshake,
 * the reader that hands router frames to their jobs, the session stream's writer, heartbeats and the idle
 * timeout, the drain, revocations and the teardown. {@link io.continuum.broker.relay.session.BusSession} wires
 * them and returns a {@link io.continuum.broker.relay.session.SessionOutcome}; the data streams it opens are in
 * {@code stream}, what runs the next attempt is in {@code loop}, and neither of those is reached from here
 * except the streams, through {@link io.continuum.broker.relay.stream.StreamContext}.
 */
package io.continuum.broker.relay.session;
