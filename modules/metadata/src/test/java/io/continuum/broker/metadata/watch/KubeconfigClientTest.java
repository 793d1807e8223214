package io.continuum.broker.metadata.watch;

import java.nio.file.Files;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.testing.kube.FakeKubeApi;
import io.continuum.broker.testing.kube.RecordedRequest;
import io.continuum.broker.testing.kube.RequestKind;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The trimmed client-java (modules/metadata/pom.xml exclusions) still configures itself from a kubeconfig
 * the standard way and syncs the view; the excluded jars are really absent from this class path.
 */
class KubeconfigClientTest {
    @ParameterizedTest
    @ValueSource(strings = {"com.google.protobuf.Message", "io.kubernetes.client.proto.V1.Pod",
            "org.apache.commons.collections4.MultiValuedMap", "com.fasterxml.jackson.databind.ObjectMapper"})
    void trimmedDependenciesAreAbsent(String className) {
        assertThrows(ClassNotFoundException.class, () -> Class.forName(className));
    }

    @Test
    void kubeconfigConfigurationWorksWithoutTheTrimmedJars() throws Exception {
        try (FakeKubeApi api = FakeKubeApi.builder().build()) {
            api.put("ns1", MetadataWatcherTest.resource("a", "tcp://10.9.0.1:5557"));
            ApiClient client;
            try (var reader = Files.newBufferedReader(api.kubeconfig())) {
                // what Config.defaultClient() does for $KUBECONFIG / ~/.kube/config
                client = ClientBuilder.kubeconfig(KubeConfig.loadKubeConfig(reader)).build();
            }
            assertEquals(api.url(), client.getBasePath());
            try (MetadataWatcher w = MetadataWatcher.builder().apiClient(client).namespaces(List.of("ns1"))
                    .build().start()) {
                assertTrue(w.awaitSynced(Duration.ofSeconds(20)));
                assertEquals(Advertisement.ADVERTISED, w.check(PublisherKey.of("dynamo", "10.9.0.1", 5557)));
            }
            RecordedRequest list = api.requests().stream().filter(r -> r.kind() == RequestKind.LIST).findFirst()
                    .orElseThrow();
            assertEquals("/apis/nvidia.com/v1alpha1/namespaces/ns1/dynamoworkermetadatas", list.path());
            assertEquals("32", list.param("limit"));
        }
    }
}
