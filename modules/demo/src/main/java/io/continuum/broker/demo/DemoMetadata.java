package io.continuum.broker.demo;

/**
 * {@code DynamoWorkerMetadata} resources for the demo's in-process Kubernetes API: one per
 * publisher, alternating the older flat channel shape and the newer scoped one, each with a
 * request-plane {@code endpoints} entry that the broker must never treat as dialable.
 */
final class DemoMetadata {
    private DemoMetadata() {
    }

    static String resource(String kubernetesNamespace, int worker, String dynamoNamespace, int port) {
        String name = "vllm-worker-" + worker;
        String channelKey;
        String channel;
        if (worker % 2 == 0) {
            channelKey = dynamoNamespace + "/backend/kv-events/" + Integer.toHexString(0x2a + worker);
            channel = "{\"type\":\"EventChannel\",\"namespace\":\"" + dynamoNamespace + "\",\"component\":\"backend\","
                    + "\"topic\":\"kv-events\",\"instance_id\":" + (42 + worker) + ",\"transport\":{\"kind\":\"Zmq\","
                    + "\"config\":{\"endpoint\":\"tcp://127.0.0.1:" + port + "\"}}}";
        } else {
            channelKey = "namespace/" + dynamoNamespace + "/component/backend/topic/kv-events/"
                    + Integer.toHexString(0x2a + worker);
            channel = "{\"type\":\"EventChannel\",\"scope\":{\"kind\":\"component\",\"namespace\":\"" + dynamoNamespace
                    + "\",\"component\":\"backend\"},\"topic\":\"kv-events\",\"instance_id\":" + (42 + worker)
                    + ",\"transport\":{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"tcp://127.0.0.1:" + port + "\"}}}";
        }
        return "{\"apiVersion\":\"nvidia.com/v1alpha1\",\"kind\":\"DynamoWorkerMetadata\","
                + "\"metadata\":{\"name\":\"" + name + "\",\"namespace\":\"" + kubernetesNamespace + "\"},"
                + "\"spec\":{\"data\":{"
                + "\"endpoints\":{\"" + dynamoNamespace + "/backend/generate\":\"10.244.9.9:8000/" + worker + "/generate\"},"
                + "\"model_cards\":{\"demo-model\":{\"display_name\":\"demo\",\"context_length\":8192}},"
                + "\"event_channels\":{\"" + channelKey + "\":" + channel + "}}}}";
    }
}
