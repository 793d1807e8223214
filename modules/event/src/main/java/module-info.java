/**
 * Structured events for every module of the broker: an event name plus typed fields, logged through
 * java.util.logging and rendered as one logfmt or JSON line by {@link io.continuum.broker.event.EventFormatter};
 * JSON, in log lines and on the app's status page, is written by {@link io.continuum.broker.event.JsonWriter}.
 * This module is the only place where values are quoted and escaped. The bottom of the module graph: it knows nothing
 * of the bus, the metadata view or the app.
 */
module io.continuum.broker.event {
    // EventFormatter extends java.util.logging.Formatter: whoever installs it needs JUL too.
    requires transitive java.logging;
    requires com.fasterxml.jackson.core;

    exports io.continuum.broker.event;
}
