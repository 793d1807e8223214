/**
 * The event-bus wire protocol v1: frames, the length-prefixed JSON codec, codes and the limits
 * negotiated by {@code welcome}. Pure data and parsing: no I/O, no threads.
 */
module io.continuum.broker.protocol {
    requires com.fasterxml.jackson.core;

    exports io.continuum.broker.protocol;
}
