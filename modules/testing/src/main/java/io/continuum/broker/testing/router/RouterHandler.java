package io.continuum.broker.testing.router;

/**
 * Decides what the {@link TestRouter} does with an accepted stream. The default hands every stream to the test
 * ({@link TestRouter#nextStream}); the session layer's router logic (hello/welcome frames) can sit here later.
 */
@FunctionalInterface
public interface RouterHandler {
    /**
     * Called on the stream's own server thread. The stream stays open until the handler (or the test) ends,
     * answers or resets it.
     *
     * @param stream the accepted stream
     * @throws Exception any failure resets the stream
     */
    void accept(RouterStream stream) throws Exception;
}
