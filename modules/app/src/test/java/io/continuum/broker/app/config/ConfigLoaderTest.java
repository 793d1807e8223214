package io.continuum.broker.app.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.continuum.broker.relay.api.Cidr;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import io.continuum.broker.relay.api.ReconnectBackoff;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * R-CFG: the configuration file, its defaults, every rejection, and the environment overlay.
 */
class ConfigLoaderTest {
    private static final String MINIMAL = """
            bus_url: https://router.example.com
            client_id: broker-a
            dynamo_namespaces: [dynamo]
            """;

    @TempDir
    Path dir;
    private final Map<String, String> env = new HashMap<>(Map.of("POD_NAMESPACE", "gpu-serving"));

    private Path file(String yaml) throws IOException {
        Path f = dir.resolve("config.yaml");
        Files.writeString(f, yaml);
        return f;
    }

    private BrokerConfig load(String yaml) throws Exception {
        return ConfigLoader.create(env, dir.resolve("no-sa-namespace")).load(file(yaml));
    }

    /** Loads expecting failure; returns every problem as {@code source: field: message}. */
    private List<String> problems(String yaml) throws IOException {
        Path f = file(yaml);
        ConfigException e = assertThrows(ConfigException.class,
                                         () -> ConfigLoader.create(env, dir.resolve("no-sa-namespace")).load(f));
        return e.problems().stream().map(ConfigProblem::toString).toList();
    }

    /** A problem with no line: a required field that is missing. */
    private String at(String field) {
        return dir.resolve("config.yaml") + ": " + field + ": ";
    }

    /** A problem at a line of the file. */
    private String at(int line, String field) {
        return dir.resolve("config.yaml") + ":" + line + ": " + field + ": ";
    }

    @Test
    void everyOptionalFieldTakesItsRCfgDefault() throws Exception {
        BrokerConfig c = load(MINIMAL);
        assertEquals(new BusUrl("router.example.com", 443), c.busUrl());
        assertEquals(Optional.empty(), c.caFile(), "ca_file: system roots");
        assertEquals("router.example.com", c.tlsServerName(), "tls_server_name: URL host");
        assertEquals("broker-a", c.clientId());
        assertEquals(new CredentialLocation.Env("CONTINUUM_EVENT_BROKER_CREDENTIAL"), c.credential());
        assertEquals("gpu-serving", c.kubernetesNamespace(), "kubernetes_namespace: $POD_NAMESPACE");
        assertEquals(List.of("dynamo"), c.dynamoNamespaces());
        assertEquals(List.of("gpu-serving"), c.watchNamespaces(), "watch_namespaces: kubernetes_namespace");
        assertEquals(List.of(), c.allowedCidrs(), "allowed_cidrs: none");
        assertEquals(new ListenAddress("0.0.0.0", 9464), c.metricsListen());
        assertEquals(new ReconnectBackoff(Duration.ofSeconds(1), Duration.ofSeconds(60)), c.reconnectBackoff());
        assertEquals(Duration.ofSeconds(25), c.drainDeadline());
        assertEquals(Duration.ofSeconds(5), c.upstreamConnectTimeout());
        assertEquals(Duration.ofSeconds(10), c.busConnectTimeout());
        assertEquals(LogFormat.KEY_VALUE, c.logFormat());
        assertEquals(LogLevel.INFO, c.logLevel());
        // Every field is also readable by its declaration (a new field needs no accessor).
        assertEquals(Optional.of(LogLevel.INFO), c.get(Fields.LOG_LEVEL));
        assertEquals(Optional.of(Duration.ofSeconds(25)), c.get(Fields.DRAIN_DEADLINE));
        assertEquals(Optional.of("router.example.com"), c.get(Fields.TLS_SERVER_NAME));
        assertEquals(Optional.empty(), c.get(Fields.CA_FILE));
    }

    @Test
    void everyFieldCanBeSet() throws Exception {
        Path ca = dir.resolve("ca.pem");
        BrokerConfig c = load("""
                bus_url: https://[fd00::1]:8443/
                ca_file: %s
                tls_server_name: bus.router.internal
                client_id: broker-b
                credential_file: /run/secrets/broker/credential
                kubernetes_namespace: serving
                dynamo_namespaces: [dynamo, dynamo-canary]
                watch_namespaces: [serving, serving-2]
                allowed_cidrs: [10.244.0.0/16, "fd00:10::/64"]
                metrics_listen: "[::]:9000"
                reconnect_backoff:
                  initial: 250ms
                  max: 2m
                drain_deadline: 10m
                upstream_connect_timeout: 10s
                bus_connect_timeout: 1h
                log_format: json
                """.formatted(ca));
        assertEquals(new BusUrl("fd00::1", 8443), c.busUrl());
        assertEquals(Optional.of(ca), c.caFile());
        assertEquals("bus.router.internal", c.tlsServerName());
        assertEquals(new CredentialLocation.File(Path.of("/run/secrets/broker/credential")), c.credential());
        assertEquals("serving", c.kubernetesNamespace());
        assertEquals(List.of("dynamo", "dynamo-canary"), c.dynamoNamespaces());
        assertEquals(List.of("serving", "serving-2"), c.watchNamespaces());
        assertEquals(List.of("10.244.0.0/16", "fd00:10::/64"), c.allowedCidrs().stream().map(Cidr::toString).toList());
        assertEquals(new ListenAddress("::", 9000), c.metricsListen());
        assertEquals(new ReconnectBackoff(Duration.ofMillis(250), Duration.ofMinutes(2)), c.reconnectBackoff());
        assertEquals(Duration.ofMinutes(10), c.drainDeadline());
        assertEquals(Duration.ofSeconds(10), c.upstreamConnectTimeout());
        assertEquals(Duration.ofHours(1), c.busConnectTimeout());
        assertEquals(LogFormat.JSON, c.logFormat());
    }

    @Test
    void everyProblemIsReportedNotJustTheFirst() throws IOException {
        List<String> p = problems("""
                bus_url: http://router
                colour: blue
                dynamo_namespaces: []
                drain_deadline: 1d
                """);
        assertEquals(List.of(
                at(2, "colour") + "unknown field (known fields: " + Fields.paths() + ")",
                at(1, "bus_url") + "must use https:// (scheme 'http' is not allowed; plaintext is never used, R-SEC-13)",
                at("client_id") + "is required",
                at(3, "dynamo_namespaces") + "has 0 entries, must have 1..64",
                at(4, "drain_deadline") + "must be a whole number and a unit ms, s, m or h, at least 1ms"
                        + " (e.g. 250ms, 10s), got \"1d\""), p);
    }

    @Nested
    class BusUrlRSec13 {
        @Test
        void isRequired() throws IOException {
            assertEquals(List.of(at("bus_url") + "is required"),
                         problems("client_id: a\ndynamo_namespaces: [d]\n"));
        }

        @ParameterizedTest
        @ValueSource(strings = {"http://router:80", "HTTP://router", "ws://router"})
        void plaintextAndOtherSchemesAreRejected(String url) throws IOException {
            String msg = problems(MINIMAL.replace("https://router.example.com", url)).getFirst();
            assertTrue(msg.startsWith(at(1, "bus_url") + "must use https://"), msg);
        }

        @Test
        void malformedUrlsAreRejectedWithAReason() throws IOException {
            assertEquals(List.of(at(1, "bus_url") + "has no scheme (expected https://host[:port])"),
                         problems(MINIMAL.replace("https://router.example.com", "router.example.com")));
            assertEquals(List.of(at(1, "bus_url") + "must not have a path (expected https://host[:port])"),
                         problems(MINIMAL.replace("https://router.example.com", "https://router/bus/v1")));
            assertEquals(List.of(at(1, "bus_url") + "has an invalid port (expected 1..65535)"),
                         problems(MINIMAL.replace("https://router.example.com", "https://router:0")));
            assertEquals(List.of(at(1, "bus_url") + "is not a valid URL (expected https://host[:port])"),
                         problems(MINIMAL.replace("https://router.example.com", "\"https://rou ter\"")));
            assertEquals(List.of(at(1, "bus_url") + "has an invalid host (non-canonical IPv4 literals are not accepted)"),
                         problems(MINIMAL.replace("https://router.example.com", "https://0177.0.0.1")));
        }

        @Test
        void userInfoIsRejectedWithoutEchoingIt() throws IOException {
            List<String> p = problems(MINIMAL.replace("https://router.example.com", "https://user:s3cret@router"));
            assertEquals(List.of(at(1, "bus_url") + "must not contain user information (credentials belong in"
                                         + " credential_file or credential_env)"), p);
            assertTrue(p.stream().noneMatch(m -> m.contains("s3cret")));
        }

        @Test
        void explicitPortAndIpLiterals() throws Exception {
            assertEquals(new BusUrl("10.0.0.5", 9443),
                         load(MINIMAL.replace("https://router.example.com", "https://10.0.0.5:9443")).busUrl());
        }
    }

    @Nested
    class UnknownFields {
        @Test
        void unknownNestedFieldNamesItsPathAndTheFile() throws IOException {
            List<String> p = problems(MINIMAL + "reconnect_backoff:\n  initial: 1s\n  maximum: 5s\n");
            assertEquals(1, p.size());
            assertTrue(p.getFirst().startsWith(at(6, "reconnect_backoff.maximum") + "unknown field"), p.getFirst());
        }

        @Test
        void aDottedKeyIsTheNestedFieldAndStillChecked() throws Exception {
            // Helidon config reads a dotted YAML key as a path: the same field, the same checks.
            assertEquals(Duration.ofSeconds(2), load(MINIMAL + "reconnect_backoff.initial: 2s\n")
                    .reconnectBackoff().initial());
            assertTrue(problems(MINIMAL + "reconnect_backoff.colour: red\n").getFirst()
                               .startsWith(at(4, "reconnect_backoff.colour") + "unknown field"));
        }

        @ParameterizedTest
        @ValueSource(strings = {".log_format", ".mclient_id", "reconnect_backoff.", "reconnect_backoff..max"})
        void aKeyWithAnEmptyPartIsAnUnknownField(String key) throws IOException {
            // Once a stack overflow in the Helidon-tree reader (found by ConfigLoaderFuzzTest).
            assertEquals(List.of(at(4, key) + "unknown field (known fields: " + Fields.paths() + ")"),
                         problems(MINIMAL + key + ": x\n"));
        }

        @Test
        void aScalarWhereAMappingBelongsIsRejected() throws IOException {
            assertEquals(List.of(at(4, "reconnect_backoff") + "must be a mapping with initial and max, not a string"),
                         problems(MINIMAL + "reconnect_backoff: 5s\n"));
        }

        @Test
        void wrongTypesAreRejected() throws IOException {
            assertEquals(List.of(at(2, "client_id") + "must be a string, not a list",
                                 at(3, "dynamo_namespaces") + "must be a list, not a string"),
                         problems("bus_url: https://r\nclient_id: [a]\ndynamo_namespaces: dynamo\n"));
        }
    }

    @Nested
    class Credential {
        @Test
        void bothFileAndEnvConfiguredIsAnError() throws IOException {
            assertEquals(List.of(at(4, "credential_file") + "and credential_env are both configured; configure at"
                                         + " most one (credential_env from " + dir.resolve("config.yaml") + ":5)"),
                         problems(MINIMAL + "credential_file: /x\ncredential_env: BROKER_TOKEN\n"));
        }

        @Test
        void credentialEnvMustBeAVariableName() throws IOException {
            assertEquals(List.of(at(4, "credential_env") + "must be an environment variable name"
                                         + " ([A-Za-z_][A-Za-z0-9_]*), got \"1-bad\""),
                         problems(MINIMAL + "credential_env: 1-bad\n"));
        }

        @Test
        void credentialEnvIsUsedWhenConfigured() throws Exception {
            assertEquals(new CredentialLocation.Env("BROKER_TOKEN"),
                         load(MINIMAL + "credential_env: BROKER_TOKEN\n").credential());
        }
    }

    @Nested
    class KubernetesNamespace {
        @Test
        void configuredValueWinsOverPodNamespace() throws Exception {
            assertEquals("explicit", load(MINIMAL + "kubernetes_namespace: explicit\n").kubernetesNamespace());
        }

        @Test
        void fallsBackToTheServiceAccountFile() throws Exception {
            env.remove("POD_NAMESPACE");
            Path sa = dir.resolve("namespace");
            Files.writeString(sa, "from-sa\n");
            BrokerConfig c = ConfigLoader.create(env, sa).load(file(MINIMAL));
            assertEquals("from-sa", c.kubernetesNamespace());
            assertEquals(List.of("from-sa"), c.watchNamespaces());
        }

        @Test
        void noSourceAtAllIsAnError() throws IOException {
            env.remove("POD_NAMESPACE");
            assertEquals(List.of(at("kubernetes_namespace") + "is not set, $POD_NAMESPACE is unset and "
                                         + dir.resolve("no-sa-namespace") + " cannot be read; set one of them"),
                         problems(MINIMAL));
        }

        @Test
        void mustBeANamespaceName() throws IOException {
            assertEquals(List.of(at(4, "kubernetes_namespace") + "must be a Kubernetes namespace name"
                                         + " (RFC 1123 label), got \"Not_Valid\""),
                         problems(MINIMAL + "kubernetes_namespace: Not_Valid\n"));
        }
    }

    @Nested
    class Lists {
        @Test
        void dynamoNamespacesIsRequiredAndBounded() throws IOException {
            assertEquals(List.of(at("dynamo_namespaces") + "is required (a list of 1..64 entries)"),
                         problems("bus_url: https://r\nclient_id: a\n"));
            String many = IntStream.range(0, 65).mapToObj(i -> "d" + i).collect(Collectors.joining(", ", "[", "]"));
            assertEquals(List.of(at(3, "dynamo_namespaces") + "has 65 entries, must have 1..64"),
                         problems(MINIMAL.replace("[dynamo]", many)));
        }

        @Test
        void duplicatesAreRejected() throws IOException {
            assertEquals(List.of(at(3, "dynamo_namespaces") + "lists \"dynamo\" more than once"),
                         problems(MINIMAL.replace("[dynamo]", "[dynamo, dynamo]")));
        }

        @Test
        void watchNamespacesAreBoundedTo32() throws IOException {
            String many = IntStream.range(0, 33).mapToObj(i -> "ns" + i).collect(Collectors.joining(", ", "[", "]"));
            assertEquals(List.of(at(4, "watch_namespaces") + "has 33 entries, must have 1..32"),
                         problems(MINIMAL + "watch_namespaces: " + many + "\n"));
        }

        @Test
        void allowedCidrsAreValidatedAndNormalised() throws Exception {
            BrokerConfig c = load(MINIMAL + "allowed_cidrs: [10.1.2.3/8, 192.168.1.7, \"FD00:0:0:0::1/16\","
                                          + " \"::ffff:10.0.0.0/104\", \"::ffff:192.0.2.0/120\"]\n");
            // the IPv4-mapped entries are the IPv4 entries they denote; the first of them equals 10.1.2.3/8
            assertEquals(List.of("10.0.0.0/8", "192.168.1.7/32", "fd00::/16", "192.0.2.0/24"),
                         c.allowedCidrs().stream().map(Cidr::toString).toList());
        }

        @ParameterizedTest
        @CsvSource(delimiter = '|', value = {
                "10.0.0.0/33 | IPv4 prefix length above 32",
                "010.0.0.0/8 | not a canonical IPv4 literal",
                "10.0.0/8 | not a canonical IPv4 literal",
                "host.example/32 | not an IP address (host names are not allowed)",
                "fd00::/129 | IPv6 prefix length above 128",
                "10.0.0.0/08 | prefix length must be a decimal number without leading zeros",
                "fe80::1%eth0/64 | IPv6 literal with zone id or brackets"})
        void invalidCidrsAreRejected(String cidr, String reason) throws IOException {
            assertEquals(List.of(at(4, "allowed_cidrs") + "entry \"" + cidr + "\" is not an IPv4 or IPv6 CIDR: "
                                         + reason),
                         problems(MINIMAL + "allowed_cidrs: [\"" + cidr + "\"]\n"));
        }

        @Test
        void atMost256Cidrs() throws IOException {
            String many = IntStream.range(0, 257).mapToObj(i -> "10." + (i / 256) + "." + (i % 256) + ".0/24")
                    .collect(Collectors.joining(", ", "[", "]"));
            assertEquals(List.of(at(4, "allowed_cidrs") + "has 257 entries, must have 0..256"),
                         problems(MINIMAL + "allowed_cidrs: " + many + "\n"));
        }
    }

    @Nested
    class DurationValues {
        @ParameterizedTest
        @ValueSource(strings = {"0s", "0ms", "1.5s", "10", "1d", "-1s", "1 s", "1S", "s", "1sec", "9999999999999h"})
        void invalidDurationsAreRejected(String d) throws IOException {
            assertEquals(List.of(at(4, "bus_connect_timeout") + "must be a whole number and a unit ms, s, m or h,"
                                         + " at least 1ms (e.g. 250ms, 10s), got \"" + d + "\""),
                         problems(MINIMAL + "bus_connect_timeout: \"" + d + "\"\n"));
        }

        @Test
        void drainDeadlineIsAtMostTenMinutes() throws IOException {
            assertEquals(List.of(at(4, "drain_deadline") + "must be at most 10m, got \"601s\""),
                         problems(MINIMAL + "drain_deadline: 601s\n"));
        }

        @Test
        void upstreamConnectTimeoutIsAtMostTenSeconds() throws IOException {
            assertEquals(List.of(at(4, "upstream_connect_timeout") + "must be at most 10s, got \"11s\""),
                         problems(MINIMAL + "upstream_connect_timeout: 11s\n"));
        }

        @Test
        void initialBackoffMustNotExceedMax() throws IOException {
            assertEquals(List.of(at(5, "reconnect_backoff.initial") + "(2m) must not exceed reconnect_backoff.max (1m)"),
                         problems(MINIMAL + "reconnect_backoff:\n  initial: 2m\n"));
            // Only max written (initial is its 1s default): the problem is at max's line.
            assertEquals(List.of(at(5, "reconnect_backoff.max") + "(500ms) must not be less than reconnect_backoff.initial (1s)"),
                         problems(MINIMAL + "reconnect_backoff:\n  max: 500ms\n"));
        }

        @Test
        void oneMillisecondIsTheMinimum() throws Exception {
            assertEquals(Duration.ofMillis(1), load(MINIMAL + "bus_connect_timeout: 1ms\n").busConnectTimeout());
        }
    }

    @Nested
    class OtherValues {
        @Test
        void metricsListenMustBeHostPort() throws IOException {
            assertEquals(List.of(at(4, "metrics_listen") + "must be host:port or [ipv6]:port with port 0..65535,"
                                         + " got \"9464\""),
                         problems(MINIMAL + "metrics_listen: \"9464\"\n"));
        }

        @Test
        void emptyValuesAreRejectedRatherThanDefaulted() throws IOException {
            assertEquals(List.of(at(4, "ca_file") + "must not be empty (omit the field to use its default)"),
                         problems(MINIMAL + "ca_file: \"\"\n"));
        }

        @Test
        void aYamlNullIsAnEmptyValueNotADefault() throws IOException {
            assertEquals(List.of(at(4, "ca_file") + "must not be empty (omit the field to use its default)"),
                         problems(MINIMAL + "ca_file:\n"));
            assertEquals(List.of(at(4, "ca_file") + "must not be empty (omit the field to use its default)"),
                         problems(MINIMAL + "ca_file: ~\n"));
        }

        @Test
        void anEmptyOverlayVariableIsAnError() throws IOException {
            env.put("CONTINUUM_EVENT_BROKER_CA_FILE", "");
            assertEquals(List.of("environment variable CONTINUUM_EVENT_BROKER_CA_FILE: ca_file: must not be empty"
                                         + " (omit the field to use its default)"),
                         problems(MINIMAL));
        }

        @Test
        void logFormatIsKeyValueOrJson() throws IOException {
            assertEquals(List.of(at(4, "log_format") + "must be key_value or json, got \"xml\""),
                         problems(MINIMAL + "log_format: xml\n"));
        }
    }

    @Nested
    class File {
        @Test
        void missingFile() {
            ConfigException e = assertThrows(ConfigException.class,
                                             () -> ConfigLoader.create(env, dir).load(dir.resolve("absent.yaml")));
            assertEquals(List.of(dir.resolve("absent.yaml") + ": (file): does not exist"),
                         e.problems().stream().map(ConfigProblem::toString).toList());
        }

        @Test
        void invalidYaml() throws IOException {
            String p = problems("bus_url: https://r\nclient_id: [unclosed\n").getFirst();
            assertTrue(p.startsWith(dir.resolve("config.yaml") + ":") && p.contains(": (file): is not valid YAML: "),
                       p);
            assertTrue(p.matches(".*config\\.yaml:[23]: .*"), "the line of the problem: " + p);
        }

        @Test
        void anchorsAndAliasesAreValues() throws Exception {
            BrokerConfig c = load("bus_url: https://r\nclient_id: c\ndynamo_namespaces: &d [serving]\n"
                                  + "watch_namespaces: *d\n");
            assertEquals(List.of("serving"), c.watchNamespaces());
        }

        @Test
        void aRecursiveAliasIsAProblemNotAStackOverflow() throws IOException {
            List<String> p = problems("bus_url: https://r\nclient_id: c\ndynamo_namespaces: &a [*a]\n");
            assertTrue(p.stream().allMatch(m -> m.startsWith(dir.resolve("config.yaml") + ":3: ")), p.toString());
        }

        @Test
        void aMergeKeyIsAnUnknownField() throws IOException {
            assertTrue(problems(MINIMAL + "<<: {log_level: debug}\n").getFirst()
                               .startsWith(at(4, "<<") + "unknown field"));
        }

        @Test
        void scalarsStayTheTextWritten() throws Exception {
            // YAML 1.1 would read these as a boolean and a number; a client id is text.
            assertEquals("yes", load(MINIMAL.replace("broker-a", "yes")).clientId());
            assertEquals("0x1F", load(MINIMAL.replace("broker-a", "0x1F")).clientId());
        }

        @Test
        void twoDocumentsAreNotOneConfiguration() throws IOException {
            String p = problems(MINIMAL + "---\nclient_id: b\n").getFirst();
            assertTrue(p.matches(".*config\\.yaml:4: \\(file\\): is not valid YAML: .*"), p);
        }

        @ParameterizedTest
        @ValueSource(strings = {"!r_TCP%f", "bus_url: !a%20 https://r\n"})
        void aTagThatSnakeYamlRejectsWithAPlainExceptionIsNotValidYaml(String yaml) throws IOException {
            // Found by ConfigLoaderFuzzTest: SnakeYAML threw IllegalArgumentException, not a YAMLException.
            String p = problems(yaml).getFirst();
            assertTrue(p.startsWith(at("(file)") + "is not valid YAML: "), p);
        }

        @Test
        void aTopLevelListIsNotAConfiguration() throws IOException {
            assertEquals(List.of(at(1, "(file)") + "must be a YAML mapping of fields at the top level, not a list"),
                         problems("- a\n- b\n"));
        }
    }

    @Nested
    class EnvironmentOverlay {
        @Test
        void aVariableOverridesTheFileField() throws Exception {
            env.put("CONTINUUM_EVENT_BROKER_BUS_URL", "https://other:8443");
            env.put("CONTINUUM_EVENT_BROKER_RECONNECT_BACKOFF_INITIAL", "2s");
            env.put("CONTINUUM_EVENT_BROKER_DYNAMO_NAMESPACES", "a, b,c");
            env.put("CONTINUUM_EVENT_BROKER_LOG_FORMAT", "json");
            BrokerConfig c = load(MINIMAL);
            assertEquals(new BusUrl("other", 8443), c.busUrl());
            assertEquals(Duration.ofSeconds(2), c.reconnectBackoff().initial());
            assertEquals(List.of("a", "b", "c"), c.dynamoNamespaces());
            assertEquals(LogFormat.JSON, c.logFormat());
        }

        @Test
        void aVariableCanSupplyARequiredField() throws Exception {
            env.put("CONTINUUM_EVENT_BROKER_CLIENT_ID", "from-env");
            assertEquals("from-env", load("bus_url: https://r\ndynamo_namespaces: [d]\n").clientId());
        }

        @Test
        void badOverlayValuesNameTheVariable() throws IOException {
            env.put("CONTINUUM_EVENT_BROKER_DRAIN_DEADLINE", "forever");
            assertEquals(List.of("environment variable CONTINUUM_EVENT_BROKER_DRAIN_DEADLINE: drain_deadline: must be"
                                         + " a whole number and a unit ms, s, m or h, at least 1ms (e.g. 250ms, 10s),"
                                         + " got \"forever\""),
                         problems(MINIMAL));
        }

        @Test
        void aPrefixedVariableThatNamesNoFieldIsAnError() throws IOException {
            env.put("CONTINUUM_EVENT_BROKER_BUSURL", "https://x");
            env.put("CONTINUUM_EVENT_BROKER_RECONNECT_BACKOFF", "1s");
            assertEquals(List.of(
                    "environment variable CONTINUUM_EVENT_BROKER_BUSURL: (environment): names no configuration field"
                            + " (fields map to CONTINUUM_EVENT_BROKER_<FIELD_PATH> with '.' as '_', e.g."
                            + " CONTINUUM_EVENT_BROKER_BUS_URL)",
                    "environment variable CONTINUUM_EVENT_BROKER_RECONNECT_BACKOFF: (environment): names no"
                            + " configuration field (fields map to CONTINUUM_EVENT_BROKER_<FIELD_PATH> with '.' as"
                            + " '_', e.g. CONTINUUM_EVENT_BROKER_BUS_URL)"),
                         problems(MINIMAL));
        }

        @Test
        void reservedVariablesAreNotFields() throws Exception {
            env.put("CONTINUUM_EVENT_BROKER_CREDENTIAL", "x".repeat(40));
            env.put("CONTINUUM_EVENT_BROKER_JAVA_OPTS", "-Xmx64m");
            env.put("CONTINUUM_EVENT_BROKER_TOKEN", "y".repeat(40));
            // CONTINUUM_EVENT_BROKER_TOKEN is reserved only because credential_env names it.
            assertEquals(new CredentialLocation.Env("CONTINUUM_EVENT_BROKER_TOKEN"),
                         load(MINIMAL + "credential_env: CONTINUUM_EVENT_BROKER_TOKEN\n").credential());
        }

        @Test
        void credentialEnvCanItselfBeOverlaidAndIsThenReserved() throws Exception {
            env.put("CONTINUUM_EVENT_BROKER_CREDENTIAL_ENV", "CONTINUUM_EVENT_BROKER_SECRET");
            env.put("CONTINUUM_EVENT_BROKER_SECRET", "z".repeat(40));
            assertEquals(new CredentialLocation.Env("CONTINUUM_EVENT_BROKER_SECRET"), load(MINIMAL).credential());
        }

        @Test
        void theOverlayNameRule() {
            assertEquals("CONTINUUM_EVENT_BROKER_RECONNECT_BACKOFF_MAX", ConfigLoader.envName("reconnect_backoff.max"));
            assertEquals("CONTINUUM_EVENT_BROKER_ALLOWED_CIDRS", ConfigLoader.envName("allowed_cidrs"));
        }
    }

    @Nested
    class DuplicateKeys {
        @Test
        void aTopLevelKeyGivenTwiceNamesTheKeyAndBothLines() throws IOException {
            assertEquals(List.of(at(6, "drain_deadline") + "duplicate key \"drain_deadline\" at lines 4 and 6"
                                         + " (each field may be set once)"),
                         problems(MINIMAL + "drain_deadline: 5s\nlog_format: json\ndrain_deadline: 10s\n"));
        }

        @Test
        void aNestedKeyGivenTwice() throws IOException {
            assertEquals(List.of(at(6, "reconnect_backoff.max") + "duplicate key \"max\" at lines 5 and 6"
                                         + " (each field may be set once)"),
                         problems(MINIMAL + "reconnect_backoff:\n  max: 5s\n  max: 9s\n"));
        }

        @Test
        void theDottedAndTheNestedFormOfOneField() throws IOException {
            assertEquals(List.of(at(6, "reconnect_backoff.initial") + "duplicate key \"reconnect_backoff.initial\""
                                         + " at lines 5 and 6 (each field may be set once)"),
                         problems(MINIMAL + "reconnect_backoff:\n  initial: 2s\nreconnect_backoff.initial: 3s\n"));
        }

        @Test
        void aRequiredFieldGivenTwiceIsNotSilentlyTheLastOne() throws IOException {
            List<String> p = problems("bus_url: https://a\nclient_id: x\nbus_url: https://b\ndynamo_namespaces: [d]\n");
            assertEquals(List.of(at(3, "bus_url") + "duplicate key \"bus_url\" at lines 1 and 3"
                                         + " (each field may be set once)"), p);
        }
    }

    @Nested
    class LineNumbers {
        @Test
        void everyProblemInTheFileCarriesItsLine() throws IOException {
            List<String> p = problems("""
                    bus_url: https://router
                    client_id: "a b"
                    dynamo_namespaces:
                      - dynamo
                      - "bad ns"
                    watch_namespaces: [ok, Not_OK]
                    allowed_cidrs:
                      - 10.0.0.0/8
                      - 10.0.0.0/33
                    reconnect_backoff:
                      initial: 2h
                    log_level: loud
                    """);
            assertEquals(List.of(
                    at(2, "client_id") + "must be 1..253 visible ASCII characters (0x21-0x7E), got \"a b\"",
                    at(5, "dynamo_namespaces") + "entries must be 1..253 visible ASCII characters (0x21-0x7E),"
                            + " got \"bad ns\"",
                    at(6, "watch_namespaces") + "must be a Kubernetes namespace name (RFC 1123 label), got \"Not_OK\"",
                    at(9, "allowed_cidrs") + "entry \"10.0.0.0/33\" is not an IPv4 or IPv6 CIDR: IPv4 prefix length"
                            + " above 32",
                    at(11, "reconnect_backoff.initial") + "must be at most 1h, got \"2h\"",
                    at(12, "log_level") + "must be error, warn, info or debug, got \"loud\""), p);
        }

        @Test
        void theEffectiveConfigurationSaysWhereEachValueCameFrom() throws Exception {
            env.put("CONTINUUM_EVENT_BROKER_DRAIN_DEADLINE", "30s");
            BrokerConfig c = load(MINIMAL + "log_level: debug\n");
            Map<String, String> origin = c.settings().stream()
                    .collect(Collectors.toMap(BrokerConfig.Setting::name, BrokerConfig.Setting::origin));
            assertEquals(dir.resolve("config.yaml") + ":1", origin.get("bus_url"));
            assertEquals(dir.resolve("config.yaml") + ":4", origin.get("log_level"));
            assertEquals("environment variable CONTINUUM_EVENT_BROKER_DRAIN_DEADLINE", origin.get("drain_deadline"));
            assertEquals("default", origin.get("bus_connect_timeout"));
            assertEquals("$POD_NAMESPACE", origin.get("kubernetes_namespace"));
        }
    }

    @Nested
    class EmptyListOverlay {
        @Test
        void anEmptyListVariableIsAnErrorNotAnEmptyList() throws IOException {
            env.put("CONTINUUM_EVENT_BROKER_ALLOWED_CIDRS", "");
            assertEquals(List.of("environment variable CONTINUUM_EVENT_BROKER_ALLOWED_CIDRS: allowed_cidrs: is empty;"
                                         + " an empty variable would replace the file's list with nothing: write []"
                                         + " for the empty list, or unset the variable to keep the file's value"),
                         problems(MINIMAL + "allowed_cidrs: [10.244.0.0/16]\n"));
        }

        @Test
        void aBlankListVariableIsAnErrorToo() throws IOException {
            env.put("CONTINUUM_EVENT_BROKER_DYNAMO_NAMESPACES", "  ");
            assertTrue(problems(MINIMAL).getFirst().startsWith("environment variable"
                    + " CONTINUUM_EVENT_BROKER_DYNAMO_NAMESPACES: dynamo_namespaces: is empty;"));
        }

        @Test
        void bracketsAreTheExplicitEmptyList() throws Exception {
            env.put("CONTINUUM_EVENT_BROKER_ALLOWED_CIDRS", "[]");
            assertEquals(List.of(), load(MINIMAL + "allowed_cidrs: [10.244.0.0/16]\n").allowedCidrs());
        }

        @Test
        void anEmptyListWhereOneEntryIsNeededIsStillRefused() throws IOException {
            env.put("CONTINUUM_EVENT_BROKER_DYNAMO_NAMESPACES", "[]");
            assertEquals(List.of("environment variable CONTINUUM_EVENT_BROKER_DYNAMO_NAMESPACES: dynamo_namespaces:"
                                         + " has 0 entries, must have 1..64"), problems(MINIMAL));
        }
    }

    @Nested
    class DurationBounds {
        static List<Field<Duration>> durations() {
            return List.of(Fields.RECONNECT_BACKOFF_INITIAL, Fields.RECONNECT_BACKOFF_MAX, Fields.DRAIN_DEADLINE,
                           Fields.UPSTREAM_CONNECT_TIMEOUT, Fields.BUS_CONNECT_TIMEOUT);
        }

        @Test
        void everyDurationFieldHasAnUpperBound() {
            for (Field<?> f : Fields.ALL) {
                if (f.type().equals("duration")) {
                    assertTrue(durations().contains(f), f.path() + " is a duration this test must cover");
                }
            }
            assertEquals(durations().size(), Fields.ALL.stream().filter(f -> f.type().equals("duration")).count());
        }

        @ParameterizedTest
        @org.junit.jupiter.params.provider.MethodSource("durations")
        void theLargestAcceptedValueLoadsAndOneMillisecondMoreIsRefused(Field<Duration> field) throws Exception {
            Duration max = Fields.maxOf(field);
            // initial <= max: raise the other end of the range with it.
            String other = field == Fields.RECONNECT_BACKOFF_INITIAL ? "CONTINUUM_EVENT_BROKER_RECONNECT_BACKOFF_MAX"
                    : null;
            if (other != null) {
                env.put(other, Durations.format(max));
            }
            env.put(field.envName(), Durations.format(max));
            BrokerConfig c = load(MINIMAL);
            assertTrue(c.settings().stream().anyMatch(s -> s.name().equals(field.path())
                    && s.value().equals(Durations.format(max))), c.settings().toString());
            // The relay adds these to System.nanoTime(): no overflow, with room to spare.
            assertTrue(max.toNanos() < Long.MAX_VALUE / 4);

            String tooLong = max.plusMillis(1).toMillis() + "ms";
            env.put(field.envName(), tooLong);
            assertEquals(List.of("environment variable " + field.envName() + ": " + field.path() + ": must be at most "
                                         + Durations.format(max) + ", got \"" + tooLong + "\""),
                         problems(MINIMAL));
        }

        @Test
        void aDurationThatWouldOverflowNanosecondsIsRefused() throws IOException {
            assertEquals(List.of(at(4, "bus_connect_timeout") + "must be at most 1h, got \"999999999999h\""),
                         problems(MINIMAL + "bus_connect_timeout: 999999999999h\n"));
            assertEquals(List.of(at(5, "reconnect_backoff.max") + "must be at most 1h, got \"300000h\""),
                         problems(MINIMAL + "reconnect_backoff:\n  max: 300000h\n"));
        }
    }

    @Nested
    class LogLevelField {
        @Test
        void defaultsToInfoAndTakesEveryLevel() throws Exception {
            assertEquals(LogLevel.INFO, load(MINIMAL).logLevel());
            for (LogLevel l : LogLevel.values()) {
                assertEquals(l, load(MINIMAL + "log_level: " + l + "\n").logLevel());
            }
        }

        @Test
        void hasAnOverlayVariable() throws Exception {
            env.put("CONTINUUM_EVENT_BROKER_LOG_LEVEL", "warn");
            assertEquals(LogLevel.WARN, load(MINIMAL + "log_level: debug\n").logLevel());
        }

        @Test
        void anUnknownLevelIsRefused() throws IOException {
            env.put("CONTINUUM_EVENT_BROKER_LOG_LEVEL", "trace");
            assertEquals(List.of("environment variable CONTINUUM_EVENT_BROKER_LOG_LEVEL: log_level: must be error,"
                                         + " warn, info or debug, got \"trace\""), problems(MINIMAL));
        }
    }

    @Nested
    class ServiceLinkVariables {
        @Test
        void theKubeletsVariablesForTheMetricsServiceAreIgnored() throws Exception {
            env.put("CONTINUUM_EVENT_BROKER_METRICS_SERVICE_HOST", "10.96.12.7");
            env.put("CONTINUUM_EVENT_BROKER_METRICS_SERVICE_PORT", "9464");
            env.put("CONTINUUM_EVENT_BROKER_METRICS_SERVICE_PORT_METRICS", "9464");
            env.put("CONTINUUM_EVENT_BROKER_METRICS_PORT", "tcp://10.96.12.7:9464");
            env.put("CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP", "tcp://10.96.12.7:9464");
            env.put("CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP_PROTO", "tcp");
            env.put("CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP_PORT", "9464");
            env.put("CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP_ADDR", "10.96.12.7");
            env.put("CONTINUUM_EVENT_BROKER_METRICS_A_SERVICE_HOST", "fd00:96::8");
            env.put("CONTINUUM_EVENT_BROKER_METRICS_A_PORT", "tcp://[fd00:96::8]:9464");
            env.put("CONTINUUM_EVENT_BROKER_METRICS_A_PORT_9464_TCP_ADDR", "fd00:96::8");
            assertEquals("broker-a", load(MINIMAL).clientId());
        }

        @ParameterizedTest
        @ValueSource(strings = {
                "CONTINUUM_EVENT_BROKER_METRICS_SERVICE_HOST=router.example.com",
                "CONTINUUM_EVENT_BROKER_METRICS_SERVICE_PORT=http",
                "CONTINUUM_EVENT_BROKER_METRICS_PORT=9464",
                "CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP=tcp://10.0.0.1:9000",
                "CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP_PROTO=udp",
                "CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP_PORT=9000",
                "CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP_ADDR=10.0.0",
                "CONTINUUM_EVENT_BROKER_METRICS_PORT_99999_TCP_PORT=99999",
                "CONTINUUM_EVENT_BROKER_LOG_LEVL=debug"})
        void aVariableThatOnlyLooksLikeOneIsStillAnUnknownField(String assignment) throws IOException {
            String name = assignment.substring(0, assignment.indexOf('='));
            env.put(name, assignment.substring(name.length() + 1));
            assertEquals(List.of("environment variable " + name + ": (environment): names no configuration field"
                                         + " (fields map to CONTINUUM_EVENT_BROKER_<FIELD_PATH> with '.' as '_', e.g."
                                         + " CONTINUUM_EVENT_BROKER_BUS_URL)"), problems(MINIMAL));
        }
    }
}
