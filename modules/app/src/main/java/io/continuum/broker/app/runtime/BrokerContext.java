package io.continuum.broker.app.runtime;

import java.util.Optional;

import io.continuum.broker.app.config.BrokerConfig;
import io.continuum.broker.app.observe.BrokerMetrics;
import io.continuum.broker.app.secrets.CaBundleSource;
import io.continuum.broker.app.secrets.CredentialSource;

/**
 * What the shell hands to a {@link BrokerRuntimeFactory}.
 *
 * @param config     validated configuration
 * @param credential credential source; call {@code load()} at every session attempt
 * @param caBundle   CA bundle source when {@code ca_file} is set (else system roots); call
 *                   {@code load()} at every session attempt
 * @param metrics    metrics to count into
 * @param version    broker version, for {@code hello.agent} and {@code user-agent}
 */
public record BrokerContext(BrokerConfig config,
                            CredentialSource credential,
                            Optional<CaBundleSource> caBundle,
                            BrokerMetrics metrics,
                            String version) {
}
