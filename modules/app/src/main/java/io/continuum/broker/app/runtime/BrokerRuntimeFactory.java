package io.continuum.broker.app.runtime;

/**
 * Creates the {@link BrokerRuntime} from everything the shell has prepared. Wiring the relay is
 * one implementation of this interface, passed to {@code Cli}.
 */
@FunctionalInterface
public interface BrokerRuntimeFactory {

    /**
     * Creates the runtime. It binds the metric gauges it owns (session, streams, metadata).
     *
     * @param context configuration, credential and CA sources, metrics, version
     * @return runtime, not yet started
     */
    BrokerRuntime create(BrokerContext context);
}
