/**
 * Target checks and dialing for {@code subscribe} (R-SEC, R-OPEN, bus-protocol-v1.md section 5
 * rows 4-10): the address filter, name resolution within a deadline, bounded and cancellable
 * dialing of exactly the address that passed the filter, and rate-limited refusal logs.
 * Internal to the relay module (not exported); see {@code docs/security.md}.
 */
package io.continuum.broker.relay.dial;
