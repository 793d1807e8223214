/**
 * What runs session after session (bus-protocol-v1.md section 4 items 3 and 4, R-BEH): wait for the first
 * metadata sync, one {@code BusSession} at a time, the reconnect backoff, the throttle after a rebalance, and the
 * loop's own death (exit 70). The loop's state is what {@code /statusz} shows; one attempt's own machine stays in
 * {@code session} ({@link io.continuum.broker.relay.session.SessionLife.State}).
 */
package io.continuum.broker.relay.loop;
