package io.continuum.broker.relay.dial;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.continuum.broker.metadata.Advertisement;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.PublisherView;

/**
 * A metadata view over a fixed set of keys, for tests of the target checks (the view itself is
 * not under test here).
 */
final class KeySetView implements PublisherView {
    private final Set<PublisherKey> keys = ConcurrentHashMap.newKeySet();
    private volatile boolean synced;

    KeySetView(boolean synced, PublisherKey... keys) {
        this.synced = synced;
        this.keys.addAll(Set.of(keys));
    }

    static KeySetView synced(PublisherKey... keys) {
        return new KeySetView(true, keys);
    }

    KeySetView advertise(String namespace, String host, int port) {
        keys.add(PublisherKey.of(namespace, host, port));
        return this;
    }

    @Override
    public boolean isSynced() {
        return synced;
    }

    @Override
    public Advertisement check(PublisherKey key) {
        if (!synced) {
            return Advertisement.NOT_SYNCED;
        }
        return keys.contains(key) ? Advertisement.ADVERTISED : Advertisement.NOT_ADVERTISED;
    }

    @Override
    public AutoCloseable onChange(Runnable listener) {
        return () -> { };
    }
}
