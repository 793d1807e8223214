package io.continuum.broker.app.runtime;

import java.time.Duration;
import java.time.Instant;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.continuum.broker.app.config.BrokerConfig;
import io.continuum.broker.app.observe.BrokerStatus;
import io.continuum.broker.relay.api.SessionState;

/**
 * A runtime that runs no relay: the process serves {@code /healthz}, {@code /metrics} and
 * {@code /statusz} (state {@code idle}), stays not ready, and shuts down cleanly on a signal. The
 * builder's default runtime (the launcher always sets the relay's), used by the shell's own tests, and the
 * reference for what a runtime must provide.
 */
public final class IdleRuntime implements BrokerRuntime {
    private final BrokerConfig config;
    private final Instant since = Instant.now();

    /**
     * Creates the runtime.
     *
     * @param context shell context
     */
    public IdleRuntime(BrokerContext context) {
        this.config = context.config();
    }

    @Override
    public BooleanSupplier ready() {
        return () -> false;
    }

    @Override
    public Supplier<BrokerStatus> status() {
        return () -> BrokerStatus.withoutRelay(SessionState.IDLE, since, config.clientId(),
                                                  config.busUrl().toString());
    }

    @Override
    public void start() {
        // Nothing to start: no relay in this runtime.
    }

    @Override
    public void shutdown(Duration drainDeadline) {
        // No session, nothing to drain: R-BEH-8 exits at once without a welcomed session.
    }
}
