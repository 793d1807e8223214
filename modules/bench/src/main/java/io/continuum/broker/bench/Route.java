package io.continuum.broker.bench;

/** Opens a way from a publisher port to an endpoint a SUB connects to; closed after each run. */
interface Route extends AutoCloseable {
    /** The three paths measured side by side in one run. */
    enum Kind {
        DIRECT, STUNNEL, BROKER
    }

    /** The ZMQ endpoint the SUB connects to. */
    String endpoint();

    @Override
    void close();

    static Route open(Kind kind, int pubPort, BenchBroker broker) throws Exception {
        return switch (kind) {
            case DIRECT -> new Route() {
                @Override
                public String endpoint() {
                    return "tcp://127.0.0.1:" + pubPort;
                }

                @Override
                public void close() {
                }
            };
            case STUNNEL -> new StunnelRoute(pubPort, broker.server(), broker.work());
            case BROKER -> new BrokerRoute(pubPort, 1, broker);
        };
    }
}
