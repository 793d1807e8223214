package io.continuum.broker.testing.kube;

/** What a request to the fake API server asked for. */
public enum RequestKind {
    /** A list (page) of DynamoWorkerMetadata. */
    LIST,
    /** A watch of DynamoWorkerMetadata. */
    WATCH,
    /** Anything else (answered 404). */
    OTHER
}
