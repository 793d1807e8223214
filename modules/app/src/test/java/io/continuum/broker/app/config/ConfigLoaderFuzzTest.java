package io.continuum.broker.app.config;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Coverage-guided fuzzing of the configuration loader (R-CFG, R-SEC 13 and 14). The
 * input is a configuration file's bytes (any bytes: YAML or not, UTF-8 or not) and, in its last
 * byte, which environment variables are set. The contract asserted:
 * <ul>
 *     <li>{@link ConfigLoader#load} returns a {@link BrokerConfig} or throws the one
 *     {@link ConfigException} listing at least one problem; any other exception is a finding;</li>
 *     <li>a returned configuration satisfies every R-CFG constraint, re-checked here from the
 *     requirements rather than from the loader's code: https {@code bus_url} with a host and a
 *     port 1..65535, durations of at least 1 ms, {@code reconnect_backoff.initial <= max},
 *     {@code drain_deadline <= 10m}, {@code upstream_connect_timeout <= 10s}, the other durations at most 1h, 1..64 distinct
 *     Dynamo namespaces, 1..32 distinct watch namespaces that are RFC 1123 labels, at most 256
 *     distinct CIDRs, a valid {@code credential_env} name that is no overlay variable, ...;</li>
 *     <li>the credential (the value of every variable that may hold it) never appears in an error
 *     message, a problem, or the configuration's description.</li>
 * </ul>
 * Inputs: {@code src/test/resources/io/continuum/broker/app/config/ConfigLoaderFuzzTestInputs/load/}
 * (the shipped example, the configurations of {@code ConfigLoaderTest}, and past findings).
 */
class ConfigLoaderFuzzTest {
    /** What a credential looks like: 32..512 bytes (R-CFG). Never in any output. */
    private static final String SECRET = "cr3d-7f2Qz9LmV0xW4yB8nR1tK6pJ3hG5dS";
    private static final Path DIR;

    static {
        try {
            DIR = Files.createTempDirectory("config-fuzz");
            Files.writeString(DIR.resolve("sa-namespace"), "sa-ns\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @FuzzTest(maxDuration = "15s")
    void load(FuzzedDataProvider data) throws IOException {
        int environmentBits = data.consumeInt(0, 255);
        byte[] yaml = data.consumeRemainingAsBytes();
        Path file = DIR.resolve("config.yaml");
        Files.write(file, yaml);

        Map<String, String> env = new HashMap<>();
        bit(environmentBits, 0, () -> env.put("POD_NAMESPACE", "gpu-serving"));
        bit(environmentBits, 1, () -> env.put(CredentialLocation.DEFAULT_ENV, SECRET));
        bit(environmentBits, 2, () -> env.put("BROKER_TOKEN", SECRET));
        bit(environmentBits, 3, () -> env.put(ConfigLoader.ENV_PREFIX + "TOKEN", SECRET));
        bit(environmentBits, 4, () -> env.put(ConfigLoader.envName("bus_url"), "https://env.example:8443"));
        bit(environmentBits, 5, () -> env.put(ConfigLoader.envName("dynamo_namespaces"), "dynamo, dynamo-canary"));
        bit(environmentBits, 6, () -> env.put(ConfigLoader.envName("drain_deadline"), "11m"));
        // Bit 7 already picks the ServiceAccount file; bits 2 and 4 together add the kubelet's service links
        // and the explicit empty list.
        if ((environmentBits & 0b0001_0100) == 0b0001_0100) {
            env.put("CONTINUUM_EVENT_BROKER_METRICS_SERVICE_HOST", "10.0.0.11");
            env.put("CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP", "tcp://10.0.0.11:9464");
            env.put(ConfigLoader.envName("allowed_cidrs"), "[]");
        }
        Path serviceAccountNamespace = (environmentBits & 128) != 0 ? DIR.resolve("sa-namespace")
                : DIR.resolve("no-such-file");

        // The fuzzer learns the credential's text from the comparisons below and writes it into the file;
        // echoing the file is fine: only text taken from the credential's variables must never show.
        boolean fileHoldsSecret = new String(yaml, StandardCharsets.ISO_8859_1).contains(SECRET);
        BrokerConfig config;
        try {
            config = ConfigLoader.create(env, serviceAccountNamespace).load(file);
        } catch (ConfigException e) {
            assertFalse(e.problems().isEmpty(), "a configuration error lists its problems");
            for (ConfigProblem p : e.problems()) {
                assertNotNull(p.source());
                assertNotNull(p.field());
                assertNotNull(p.message());
            }
            if (!fileHoldsSecret) {
                assertFalse(e.getMessage().contains(SECRET), "R-SEC 14: the credential is in an error message");
                e.problems().forEach(p -> assertFalse(p.toString().contains(SECRET), "R-SEC 14: in a problem"));
            }
            return;
        }
        satisfiesRCfg(config);
        if (!fileHoldsSecret) {
            for (String[] line : config.describe()) {
                assertFalse(String.join("=", line).contains(SECRET), "R-SEC 14: the credential is described");
            }
            assertFalse(config.toString().contains(SECRET));
        }
    }

    private static void bit(int bits, int n, Runnable action) {
        if ((bits & (1 << n)) != 0) {
            action.run();
        }
    }

    private static void satisfiesRCfg(BrokerConfig c) {
        assertEquals("https", c.busUrl().toUri().getScheme(), "R-SEC 13: https only");
        assertFalse(c.busUrl().host().isEmpty());
        assertTrue(c.busUrl().port() >= 1 && c.busUrl().port() <= 65_535, "bus_url port");
        assertEquals(c.busUrl(), BusUrl.parse(c.busUrl().toString()), "bus_url is stable");
        assertNotNull(c.caFile());
        assertTrue(c.tlsServerName() != null && !c.tlsServerName().isEmpty(), "tls_server_name");
        assertTrue(visibleAscii(c.clientId()) && c.clientId().length() <= 253, "client_id");
        switch (c.credential()) {
            case CredentialLocation.File f -> assertNotNull(f.path());
            case CredentialLocation.Env e -> {
                assertTrue(e.name().matches("[A-Za-z_][A-Za-z0-9_]*"), "credential_env is a variable name");
                assertFalse(e.name().equals(ConfigLoader.JAVA_OPTS_ENV)
                        || Fields.ALL.stream().map(Field::envName).anyMatch(e.name()::equals),
                        "credential_env names no overlay variable");
            }
        }
        assertTrue(c.kubernetesNamespace().matches("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"), "kubernetes_namespace");
        distinctWithin(c.dynamoNamespaces(), 1, 64, "dynamo_namespaces");
        c.dynamoNamespaces().forEach(n -> assertTrue(visibleAscii(n) && n.length() <= 253, "dynamo namespace"));
        distinctWithin(c.watchNamespaces(), 1, 32, "watch_namespaces");
        c.watchNamespaces().forEach(n -> assertTrue(n.matches("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"), "watch ns"));
        distinctWithin(c.allowedCidrs(), 0, 256, "allowed_cidrs");
        assertTrue(c.metricsListen().port() >= 0 && c.metricsListen().port() <= 65_535, "metrics_listen port");
        atLeastOneMillisecond(c.reconnectBackoff().initial());
        atLeastOneMillisecond(c.reconnectBackoff().max());
        assertTrue(c.reconnectBackoff().initial().compareTo(c.reconnectBackoff().max()) <= 0, "initial <= max");
        atLeastOneMillisecond(c.drainDeadline());
        assertTrue(c.drainDeadline().compareTo(Duration.ofMinutes(10)) <= 0, "drain_deadline <= 10m");
        atLeastOneMillisecond(c.upstreamConnectTimeout());
        assertTrue(c.upstreamConnectTimeout().compareTo(Duration.ofSeconds(10)) <= 0, "upstream_connect_timeout");
        atLeastOneMillisecond(c.busConnectTimeout());
        // Every duration is bounded far below what a nanosecond deadline sum could overflow.
        assertTrue(c.reconnectBackoff().max().compareTo(Duration.ofHours(1)) <= 0, "reconnect_backoff.max <= 1h");
        assertTrue(c.busConnectTimeout().compareTo(Duration.ofHours(1)) <= 0, "bus_connect_timeout <= 1h");
        assertNotNull(c.logFormat());
        assertNotNull(c.logLevel());
        assertEquals(Fields.ALL.size() - 1, c.settings().size(), "one setting per field, the credential once");
    }

    private static void atLeastOneMillisecond(Duration d) {
        assertTrue(d != null && d.compareTo(Duration.ofMillis(1)) >= 0, "durations are at least 1ms");
    }

    private static void distinctWithin(List<?> list, int min, int max, String field) {
        assertTrue(list.size() >= min && list.size() <= max, field + " has " + list.size() + " entries");
        assertEquals(list.size(), new HashSet<>(list).size(), field + " has duplicates");
    }

    private static boolean visibleAscii(String s) {
        return s != null && !s.isEmpty() && s.chars().allMatch(ch -> ch >= 0x21 && ch <= 0x7e);
    }
}
