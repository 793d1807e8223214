package io.continuum.broker.relay;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.PublisherView;

/**
 * A metadata view the test controls: the relay's collaborator, not the thing under test (the
 * real view over the Kubernetes API has its own tests in the metadata module, and the demo test
 * runs the two together).
 */
public final class MutableView implements PublisherView {
    private final Set<PublisherKey> advertised = ConcurrentHashMap.newKeySet();
    private final CopyOnWriteArrayList<Runnable> listeners = new CopyOnWriteArrayList<>();
    private volatile boolean synced;
    /** Runs inside {@link #check}, after the answer is decided and before it is returned; null for none. */
    private volatile java.util.function.Consumer<PublisherKey> afterCheck;

    public MutableView synced(boolean value) {
        synced = value;
        fire();
        return this;
    }

    public MutableView advertise(String namespace, String host, int port) {
        advertised.add(PublisherKey.of(namespace, host, port));
        fire();
        return this;
    }

    public MutableView withdraw(String namespace, String host, int port) {
        advertised.remove(PublisherKey.of(namespace, host, port));
        fire();
        return this;
    }

    @Override
    public boolean isSynced() {
        return synced;
    }

    /**
     * @param hook runs inside every later {@link #check}, after its answer is decided (a test counts the checks, or
     *             holds one so that the answer it returns is stale by then); null for none
     */
    public void afterCheck(java.util.function.Consumer<PublisherKey> hook) {
        afterCheck = hook;
    }

    @Override
    public Advertisement check(PublisherKey key) {
        Advertisement answer = !synced ? Advertisement.NOT_SYNCED
                : advertised.contains(key) ? Advertisement.ADVERTISED : Advertisement.NOT_ADVERTISED;
        java.util.function.Consumer<PublisherKey> hook = afterCheck;
        if (hook != null) {
            hook.accept(key);
        }
        return answer;
    }

    @Override
    public AutoCloseable onChange(Runnable listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    private void fire() {
        listeners.forEach(Runnable::run);
    }
}
